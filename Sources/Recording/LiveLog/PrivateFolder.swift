import Foundation
import Glibc

/// The folders systoled writes health data into (the store's and the live log's) must be its own: a folder
/// another user can write to lets that user put a symbolic link where systoled is about to create a file, and
/// systoled (often root) would then write heart rate wherever the link points.
package enum PrivateFolder {
    /// Why the folder cannot be used, to follow "cannot open the live log PATH: ".
    package struct Refused: Error, CustomStringConvertible {
        package var description: String
    }

    /// Creates the folder holding `file` (mode 0750 under systoled's umask) when it is missing, and refuses one
    /// that other users can write to or that belongs to another user than root or systoled's own.
    package static func prepare(forFile file: String) throws(Refused) {
        let folder = (file as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var status = stat()
        guard stat(folder, &status) == 0 else {
            throw Refused(description: "its folder \(folder): \(String(cString: strerror(errno)))")
        }
        let owner = status.st_uid
        guard owner == 0 || owner == geteuid() else {
            throw Refused(
                description: "its folder \(folder) belongs to another user (uid \(owner)); "
                    + "use a folder of systoled's own, such as /var/lib/systole or /var/log/systole"
            )
        }
        guard status.st_mode & S_IWOTH == 0 else {
            throw Refused(
                description: "every user may write to its folder \(folder), so anyone could "
                    + "put a link there in place of the file; use a folder of systoled's own, such as "
                    + "/var/lib/systole or /var/log/systole"
            )
        }
    }
}
