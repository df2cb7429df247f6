import Daemon

/// The daemon's entry point; everything else is in the Daemon module, which tests build too.
@main
enum Systoled {
    static func main() async {
        await SystoledMain.run()
    }
}
