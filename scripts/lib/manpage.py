#!/usr/bin/env python3
"""Writes a man page from a command's own help: the JSON that swift-argument-parser prints for
`COMMAND --experimental-dump-help` (its ToolInfo, version 0), read from standard input.

usage: COMMAND --experimental-dump-help | manpage.py --section 1 --date 2026-11-28 --version 0.1.0 > COMMAND.1

Every subcommand gets a section of its own page (SUBCOMMANDS), with its options; what the help calls the discussion
is the DESCRIPTION. The page says what `--help` says, in roff's man macros, so it cannot drift from the binary.
"""
import argparse
import json
import sys


def roff(text):
    """Text safe in roff: backslashes and hyphens escaped, no line starting with a control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def paragraphs(text):
    """The help's paragraphs (separated by blank lines) as roff paragraphs."""
    out = []
    for block in text.strip().split("\n\n"):
        block = " ".join(line.strip() for line in block.strip().split("\n"))
        if block:
            out += [".PP", roff(block)]
    return out


def argument_label(argument):
    names = argument.get("names") or []
    value = argument.get("valueName")
    if argument["kind"] == "positional":
        return "\\fI" + roff(value or argument.get("preferredName", {}).get("name", "value")) + "\\fR"
    spelled = []
    for name in names:
        dashes = "--" if name["kind"] in ("long", "longWithSingleDash") else "-"
        if name["kind"] == "longWithSingleDash":
            dashes = "-"
        spelled.append("\\fB" + roff(dashes + name["name"]) + "\\fR")
    label = ", ".join(spelled)
    if argument["kind"] == "option" and value:
        label += " \\fI" + roff("<" + value + ">") + "\\fR"
    return label


def arguments(command):
    out = []
    for argument in command.get("arguments") or []:
        if not argument.get("shouldDisplay", True):
            continue
        out += [".TP", argument_label(argument)]
        text = argument.get("abstract", "")
        default = argument.get("defaultValue")
        if default not in (None, "", "false") and argument["kind"] != "flag":
            text += " (default: " + default + ")"
        out.append(roff(text) if text else "")
        if argument.get("discussion"):
            out += paragraphs(argument["discussion"])[1:]
    return out


def usage(path, command):
    parts = ["\\fB" + roff(" ".join(path)) + "\\fR"]
    for argument in command.get("arguments") or []:
        if not argument.get("shouldDisplay", True) or argument.get("preferredName", {}).get("name") in ("help", "version"):
            continue
        label = argument_label(argument).split(", ")[-1] if argument["kind"] != "positional" else argument_label(argument)
        parts.append(label if not argument.get("isOptional") else "[" + label + "]")
    if any(sub["commandName"] != "help" and sub.get("shouldDisplay", True) for sub in command.get("subcommands") or []):
        parts.append("\\fIsubcommand\\fR")
    return " ".join(parts)


def subcommands(path, command):
    out = []
    for sub in command.get("subcommands") or []:
        if not sub.get("shouldDisplay", True) or sub["commandName"] == "help":
            continue
        here = path + [sub["commandName"]]
        out += [".SS", roff(" ".join(here)), ".PP", usage(here, sub)]
        if sub.get("abstract"):
            out += [".PP", roff(sub["abstract"])]
        if sub.get("discussion"):
            out += paragraphs(sub["discussion"])
        out += arguments(sub)
        out += subcommands(here, sub)
    return out


def page(info, section, date, version):
    command = info["command"]
    name = command["commandName"]
    out = [
        '.TH "%s" "%s" "%s" "systole %s" "systole"' % (name.upper(), section, date, version),
        ".SH NAME",
        roff(name) + " \\- " + roff(command.get("abstract", "")),
        ".SH SYNOPSIS",
        usage([name], command),
    ]
    if command.get("discussion"):
        out += [".SH DESCRIPTION"] + paragraphs(command["discussion"])
    if command.get("arguments"):
        out += [".SH OPTIONS"] + arguments(command)
    subs = subcommands([name], command)
    if subs:
        out += [".SH SUBCOMMANDS"] + subs
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--section", required=True)
    parser.add_argument("--date", required=True)
    parser.add_argument("--version", required=True)
    options = parser.parse_args()
    info = json.load(sys.stdin)
    if info.get("serializationVersion") != 0:
        sys.exit("manpage.py: expected swift-argument-parser's ToolInfo version 0")
    sys.stdout.write(page(info, options.section, options.date, options.version))


if __name__ == "__main__":
    main()
