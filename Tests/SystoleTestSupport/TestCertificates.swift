import Foundation
import Glibc

/// A CA (`ca.pem`, `ca.key`) and a certificate for 127.0.0.1 signed by it (`server.pem`, `server.key`) in `folder`,
/// made with openssl (EC keys: quick to make), readable by all (servers started as root drop to users of their own).
public func makeTestCertificates(in folder: URL) throws {
    let path = { (name: String) in folder.appendingPathComponent(name).path }
    let steps: [[String]] = [
        ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", path("ca.key")],
        [
            "req", "-x509", "-new", "-key", path("ca.key"), "-subj", "/CN=systole test CA", "-days", "2",
            "-out", path("ca.pem"),
        ],
        ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", path("server.key")],
        ["req", "-new", "-key", path("server.key"), "-subj", "/CN=127.0.0.1", "-out", path("server.csr")],
        [
            "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-CAcreateserial", "-days", "2", "-extfile", path("san.cnf"), "-out", path("server.pem"),
        ],
    ]
    try "subjectAltName = IP:127.0.0.1\n".write(toFile: path("san.cnf"), atomically: true, encoding: .utf8)
    for step in steps {
        let result = try CommandRunner.runBlocking("/usr/bin/openssl", step)
        guard result.status == 0 else {
            throw MosquittoBroker.StartFailed(description: "openssl \(step.first ?? ""): \(result.standardError)")
        }
    }
    for name in ["ca.pem", "server.pem", "server.key"] { chmod(path(name), 0o644) }
}
