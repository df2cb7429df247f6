import Daemon
@preconcurrency import Glibc
import MQTTBridge
import SystoleCLI

// One binary for both commands: called as systoled (the package's /usr/sbin/systoled links here), it is the daemon.
// The MQTT client process systoled starts from /proc/self/exe comes here too, with its argument.
let name = CommandLine.arguments.first?.split(separator: "/").last ?? ""
if name == "systoled" || CommandLine.arguments.dropFirst().first == MQTTClientChild.argument {
    await SystoledMain.run()
    exit(0)
}

// Each line goes out as it is printed, also into a pipe or a file (`systole monitor | jq`, `systole monitor >
// hr.log`): a block-buffered standard output would hold measurements back until exit and lose them on Ctrl-C.
setvbuf(stdout, nil, _IOLBF, 0)
exit(await SystoleCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
