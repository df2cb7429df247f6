import Foundation
import SafeText
import Testing

@Suite struct UntrustedTextTests {
    @Test func controlAndFormatCharactersAreReplaced() {
        #expect(UntrustedText.clean("Polar H10 91948D23") == "Polar H10 91948D23")
        #expect(UntrustedText.clean("\u{1B}]0;owned\u{07}\u{1B}[2JH10") == "\u{FFFD}]0;owned\u{FFFD}\u{FFFD}[2JH10")
        #expect(
            UntrustedText.clean("strap\r\n2026-11-24T06:00:00.000Z A0:9E bpm=250")
                == "strap\u{FFFD}\u{FFFD}2026-11-24T06:00:00.000Z A0:9E bpm=250"
        )
        // Bidirectional override, zero-width joiner, C1 control, line separator.
        #expect(UntrustedText.clean("a\u{202E}b\u{200D}c\u{9B}d\u{2028}e") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e")
        #expect(UntrustedText.clean("  Wahoo TICKR  ") == "Wahoo TICKR")
        #expect(UntrustedText.clean("Pulsómetro ❤️ 心拍") == "Pulsómetro ❤️ 心拍")
    }

    @Test func longNamesAreCut() {
        let cleaned = UntrustedText.clean(String(repeating: "x", count: 10_000))
        #expect(cleaned.count == UntrustedText.maximumLength)
        #expect(cleaned.hasSuffix("…"))
    }

    @Test func nothingCleanedHoldsAControlCharacterWhateverItWas() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let scalars = (0..<Int.random(in: 0..<100, using: &generator)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0..<0x3_0000, using: &generator))
            }
            var text = String.UnicodeScalarView()
            text.append(contentsOf: scalars)
            let cleaned = UntrustedText.clean(String(text))
            #expect(cleaned.count <= UntrustedText.maximumLength)
            #expect(!cleaned.unicodeScalars.contains { $0.properties.generalCategory == .control })
            #expect(!cleaned.unicodeScalars.contains { $0.properties.generalCategory == .format })
        }
    }
}
