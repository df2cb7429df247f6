#!/usr/bin/env python3
"""icu-trim.py IN.dat OUT.dat [--keep LOCALE ...]: writes ICU's common data package IN.dat (the one
swift-corelibs-foundation links into every static binary) with only what systole's Foundation calls need.

Kept: every item that is not a locale's own (the Unicode properties, normalization, collation's root tables, the
time-zone database, plural rules, break rules, ...), and the locale items of `root` and of the --keep locales
(default: English and twenty of the languages most systole users read; a region falls back to its language, as
de_AT to de) in every category. Left out: every other locale's data, the legacy
character-set converters (*.cnv: Foundation decodes UTF-8/16/32 itself) and the word dictionaries of Chinese,
Japanese, Thai, Lao, Khmer and Burmese line breaking. A locale left out falls back to root, as ICU does for any
locale it lacks. systole's own text is English; ICU formats its dates and numbers for the user's locale.

The package format (ICU's "common data", udata.cpp): a header (its size in the first two bytes, magic 0xda 0x27),
then a table of contents: an item count and, per item, the offsets of its name and of its data from the table's
start; names are NUL-terminated, data items 16-byte aligned and sorted by name.
"""
import re
import struct
import sys

DEFAULT_KEEP = [
    "en", "en_US", "en_US_POSIX", "en_001", "en_150", "en_GB",
    "de", "fr", "es", "it", "nl", "pt", "sv", "da", "nb", "no", "fi", "pl", "cs", "ja", "zh", "zh_Hans", "ko", "ru",
]
# A locale's own item: icudt76l/[category/]LOCALE.res, LOCALE being a language with script, region and variants.
LOCALE_ITEM = re.compile(r"^(?:[a-z]+/)?([a-z]{2,3}(?:_[A-Za-z0-9]+)*)\.res$")
# Items named like a locale that are not one.
NOT_A_LOCALE = {"res_index", "pool", "root"}
DICTIONARIES = re.compile(r"^brkitr/(?:cjdict|thaidict|laodict|khmerdict|burmesedict)\.dict$")


def read_package(data):
    header_size = struct.unpack_from("<H", data, 0)[0]
    if data[2:4] != b"\xda\x27":
        sys.exit("icu-trim: not an ICU data package (magic %s)" % data[2:4].hex())
    toc = header_size
    count = struct.unpack_from("<I", data, toc)[0]
    entries = [struct.unpack_from("<II", data, toc + 4 + 8 * i) for i in range(count)]
    items = []
    for i, (name_offset, data_offset) in enumerate(entries):
        name = data[toc + name_offset : data.index(b"\0", toc + name_offset)].decode("ascii")
        end = entries[i + 1][1] if i + 1 < count else len(data) - toc
        items.append((name, data[toc + data_offset : toc + end]))
    return data[:header_size], items


def wanted(name, keep):
    # name: "icudt76l/coll/de.res" → "coll/de.res"
    item = name.split("/", 1)[1] if "/" in name else name
    if item.endswith(".cnv") or DICTIONARIES.match(item):
        return False
    match = LOCALE_ITEM.match(item)
    if match and match.group(1) not in NOT_A_LOCALE:
        return match.group(1) in keep
    return True


def write_package(header, items):
    count = len(items)
    names = b""
    name_offsets = []
    for name, _ in items:
        name_offsets.append(4 + 8 * count + len(names))
        names += name.encode("ascii") + b"\0"
    # The data starts 16-byte aligned, counted from the file's start (the header's size is a multiple of 16).
    data_start = 4 + 8 * count + len(names)
    data_start += -(len(header) + data_start) % 16
    body = b""
    data_offsets = []
    for _, item in items:
        body += b"\0" * (-(len(header) + data_start + len(body)) % 16)
        data_offsets.append(data_start + len(body))
        body += item
    toc = struct.pack("<I", count)
    for name_offset, data_offset in zip(name_offsets, data_offsets):
        toc += struct.pack("<II", name_offset, data_offset)
    padding = b"\0" * (data_start - len(toc) - len(names))
    return header + toc + names + padding + body


def main():
    arguments = sys.argv[1:]
    if len(arguments) < 2 or (len(arguments) > 2 and (arguments[2] != "--keep" or len(arguments) == 3)):
        sys.exit("usage: icu-trim.py IN.dat OUT.dat [--keep LOCALE ...] (see the top of scripts/lib/icu-trim.py)")
    source, target = arguments[0], arguments[1]
    keep = set(arguments[3:]) if len(arguments) > 2 else set(DEFAULT_KEEP)
    try:
        data = open(source, "rb").read()
    except OSError as error:
        sys.exit(f"icu-trim: cannot read {source}: {error.strerror}")
    if len(data) < 8:
        sys.exit(f"icu-trim: {source} is not an ICU data package (only {len(data)} bytes)")
    try:
        header, items = read_package(data)
    except (struct.error, ValueError, UnicodeDecodeError) as error:
        sys.exit(f"icu-trim: {source}'s table of contents is damaged ({error}); is it ICU's common data?")
    kept = [(name, item) for name, item in items if wanted(name, keep)]
    out = write_package(header, kept)
    open(target, "wb").write(out)
    total = sum(len(item) for _, item in items)
    print(f"icu-trim: {len(kept)} of {len(items)} items, {len(out)} of {len(header) + total} bytes")


main()
