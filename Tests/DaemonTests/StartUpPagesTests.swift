import Foundation
import Testing

@testable import Daemon

@Suite struct StartUpPagesTests {
    @Test func readOnlyFileMappingsAreNoLongerResidentAfterTheReleaseAndTheCodeRunsAsBefore() throws {
        let sum = { (0..<200).map { ($0 * 7919) % 257 }.reduce(0, +) }
        let before = sum()
        let release = try #require(releaseStartUpPages())
        // The call returns through code it has just unmapped, and other tests run beside it, so some pages are
        // back at once; most are not.
        #expect(release.residentBefore > 1024 * 1024)
        #expect(release.residentAfter < release.residentBefore / 2)
        #expect(sum() == before)
    }

    @Test func onlyReadOnlyFileMappingsThatWereNeverWrittenAreReleased() {
        // The last one is a RELRO page the loader wrote and the kernel swapped out: it must stay.
        let smaps = """
            55d0c0a00000-55d0c0b00000 r--p 00000000 fe:00 42    /usr/bin/sys toled
            Rss:                  64 kB
            Anonymous:             0 kB
            55d0c0b00000-55d0c1b00000 r-xp 00100000 fe:00 42    /usr/bin/sys toled
            Size:              16384 kB
            Rss:               12288 kB
            Pss:               12288 kB
            Anonymous:             0 kB
            VmFlags: rd ex mr mw me dw
            55d0c1b00000-55d0c1c00000 r--p 01100000 fe:00 42    /usr/bin/sys toled
            Rss:                 512 kB
            Anonymous:           256 kB
            55d0c1c00000-55d0c1d00000 rw-p 01200000 fe:00 42    /usr/bin/sys toled
            Rss:                 512 kB
            Anonymous:             0 kB
            55d0c1d00000-55d0c1e00000 rw-p 00000000 00:00 0
            Rss:                1024 kB
            Anonymous:          1024 kB
            7f0000000000-7f0000100000 r-xp 00000000 fe:00 77    /usr/lib/libc.so.6
            Rss:                1024 kB
            Anonymous:             0 kB
            7f0000200000-7f0000300000 r-xs 00000000 fe:00 78    /usr/lib/shared.map
            Rss:                   8 kB
            Anonymous:             0 kB
            7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0    [vdso]
            Rss:                   8 kB
            Anonymous:             0 kB
            7f0000400000-7f0000401000 r--p 00020000 fe:00 77    /usr/lib/libc.so.6
            Rss:                   0 kB
            Anonymous:             0 kB
            Swap:                  4 kB
            """
        let mappings = parseSmaps(smaps)
        #expect(mappings.count == 9)
        #expect(mappings[8].swappedBytes == 4096)
        #expect(
            mappings[1]
                == Mapping(
                    start: 0x55d0_c0b0_0000,
                    end: 0x55d0_c1b0_0000,
                    permissions: "r-xp",
                    path: "/usr/bin/sys toled",
                    residentBytes: 12288 * 1024,
                    anonymousBytes: 0
                )
        )
        #expect(mappings[4].path == "")
        #expect(
            mappings.filter(\.isUnwrittenReadOnlyFile).map(\.start) == [
                0x55d0_c0a0_0000, 0x55d0_c0b0_0000, 0x7f00_0000_0000,
            ]
        )
    }
}
