import Foundation

/// The whole lines of a file another process is still writing (a simulator's emit log, a live log): a last line
/// without its newline is being written and is left out, so a reader never parses half a line.
public func wholeLines(of path: String) throws -> [Substring] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let end = text.hasSuffix("\n") ? text.endIndex : (text.lastIndex(of: "\n") ?? text.startIndex)
    return text[..<end].split(separator: "\n")
}
