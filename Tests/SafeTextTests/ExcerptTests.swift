import SafeText
import Testing

/// How an error repeats a value back: quoted, escaped, and short whatever was sent.
@Suite struct ExcerptTests {
    @Test func shortTextIsQuotedWhole() {
        #expect("abc".quotedExcerpt() == "'abc'")
    }

    @Test func controlCharactersAreEscaped() {
        #expect("a\u{1B}[2Jb\n".quotedExcerpt() == "'a\\u{1B}[2Jb\\u{A}'")
    }

    @Test func aMegabyteComesBackAsALine() {
        let excerpt = String(repeating: "a", count: 1 << 20).quotedExcerpt()
        #expect(excerpt == "'" + String(repeating: "a", count: 64) + "…' (1048576 bytes)")
    }

    /// One character of a base letter and 60 000 combining marks (120 KB of UTF-8) came back whole when characters
    /// were counted.
    @Test func oneCharacterOfManyCombiningMarksIsCutToo() {
        let text = "e" + String(repeating: "\u{301}", count: 60_000)
        #expect(text.count == 1)
        let excerpt = text.quotedExcerpt()
        #expect(excerpt.utf8.count < 200, "\(excerpt.utf8.count) bytes")
        #expect(excerpt.hasSuffix("…' (120001 bytes)"))
    }
}
