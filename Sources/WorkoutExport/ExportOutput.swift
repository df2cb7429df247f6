/// Where an export's bytes go as it makes them: a pipe, a socket, an HTTP response. Called with about
/// ``ExportOutput/chunkSize`` bytes at a time, so no file is ever held whole; a sink that throws (the reader went
/// away) stops the writing.
public typealias ExportSink = ([UInt8]) throws -> Void

/// Gathers an export's bytes into chunks for its sink. The first error the sink throws is kept, nothing more is
/// passed on, and ``finish()`` throws it: the encoders write on without a `try` at every line.
struct ExportOutput {
    /// How many bytes are gathered before they go to the sink.
    static let chunkSize = 64 * 1024

    private let sink: ExportSink
    private var buffer: [UInt8] = []
    private var failure: (any Error)?

    init(_ sink: @escaping ExportSink) {
        self.sink = sink
        buffer.reserveCapacity(Self.chunkSize)
    }

    mutating func append(_ bytes: some Sequence<UInt8>) {
        guard failure == nil else { return }
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.chunkSize { flush() }
    }

    static func += (output: inout ExportOutput, text: String) {
        output.append(text.utf8)
    }

    private mutating func flush() {
        guard failure == nil, !buffer.isEmpty else { return }
        do {
            try sink(buffer)
        } catch {
            failure = error
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Passes on what is left; throws the sink's first error.
    mutating func finish() throws {
        flush()
        if let failure { throw failure }
    }
}

/// A sink that keeps everything: the whole file, for tests and small files.
final class CollectedBytes {
    var bytes: [UInt8] = []
    var sink: ExportSink { { [self] chunk in bytes += chunk } }
}
