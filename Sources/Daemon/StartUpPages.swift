import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Waits `delay` (or until cancelled), then releases the start-up pages (`releaseStartUpPages()`).
@discardableResult
func releaseStartUpPages(after delay: Duration) async -> StartUpPageRelease? {
    do { try await Task.sleep(for: delay) } catch { return nil }
    return releaseStartUpPages()
}

/// What `releaseStartUpPages()` found and did: the resident bytes of the mappings it released, before and
/// right after.
struct StartUpPageRelease: Equatable, Sendable {
    var residentBefore: Int
    var residentAfter: Int
}

/// Unmaps the resident pages of this process's read-only file mappings (its own machine code and the shared
/// libraries'), once start-up is over, so that only what runs afterwards is mapped again.
///
/// Start-up (argument parsing, the configuration, GRDB's migrations, the first bus calls, recovering a workout,
/// the runtime's first look at each type) touches code all over the executable, and the kernel maps the 64 KiB
/// around every page touched ("fault-around"): most of an idle systoled's resident memory would be code that never
/// runs again (figures in docs/performance.md). The pages stay in the page cache; `MADV_DONTNEED` drops only this process's mapping of them, and the
/// next access maps a page back (a minor fault).
///
/// Only mappings that can never have been written are released: private file mappings without write permission,
/// without anonymous pages and without swapped-out pages (a page a relocation wrote before the mapping was made
/// read-only is anonymous while resident and counts as swap once swapped out; dropping it would lose it). `nil`
/// when `/proc/self/smaps` cannot be read.
func releaseStartUpPages() -> StartUpPageRelease? {
    guard let before = readSmaps() else { return nil }
    let released = before.filter(\.isUnwrittenReadOnlyFile)
    for mapping in released where mapping.residentBytes > 0 {
        _ = madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), Int(mapping.end - mapping.start), MADV_DONTNEED)
    }
    let starts = Set(released.map(\.start))
    let after = readSmaps()?.filter { starts.contains($0.start) } ?? []
    return StartUpPageRelease(
        residentBefore: released.reduce(0) { $0 + $1.residentBytes },
        residentAfter: after.reduce(0) { $0 + $1.residentBytes }
    )
}

/// One mapping as `/proc/self/smaps` describes it.
struct Mapping: Equatable {
    var start: UInt
    var end: UInt
    /// `r-xp`, `r--p`, `rw-p`…
    var permissions: String
    /// The mapped file, or `[heap]`, `[stack]`…, or empty for anonymous memory.
    var path: String
    var residentBytes = 0
    /// Pages not backed by the file: written (copied on write) or never file-backed.
    var anonymousBytes = 0
    /// Such pages swapped out: no longer counted as anonymous, but just as much written.
    var swappedBytes = 0

    var isUnwrittenReadOnlyFile: Bool {
        path.hasPrefix("/") && permissions.hasPrefix("r") && permissions.dropFirst().first == "-"
            && permissions.hasSuffix("p") && anonymousBytes == 0 && swappedBytes == 0
    }
}

private func readSmaps() -> [Mapping]? {
    guard let smaps = FileHandle(forReadingAtPath: "/proc/self/smaps"),
        let data = try? smaps.readToEnd()
    else { return nil }
    try? smaps.close()
    return parseSmaps(String(decoding: data, as: UTF8.self))
}

/// The mappings in the text of an smaps file: a header line per mapping ("start-end perms offset dev inode path")
/// followed by its "Key: value kB" lines.
func parseSmaps(_ smaps: String) -> [Mapping] {
    var mappings: [Mapping] = []
    for line in smaps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard let first = fields.first else { continue }
        if first.hasSuffix(":") {
            guard !mappings.isEmpty, fields.count >= 3, fields[2] == "kB", let kib = Int(fields[1]) else { continue }
            if first == "Rss:" { mappings[mappings.count - 1].residentBytes = kib * 1024 }
            if first == "Anonymous:" { mappings[mappings.count - 1].anonymousBytes = kib * 1024 }
            if first == "Swap:" { mappings[mappings.count - 1].swappedBytes = kib * 1024 }
        } else {
            let bounds = first.split(separator: "-")
            guard fields.count >= 5, bounds.count == 2, let start = UInt(bounds[0], radix: 16),
                let end = UInt(bounds[1], radix: 16)
            else { continue }
            mappings.append(
                Mapping(
                    start: start,
                    end: end,
                    permissions: String(fields[1]),
                    path: fields.count > 5 ? fields[5...].joined(separator: " ") : ""
                )
            )
        }
    }
    return mappings
}
