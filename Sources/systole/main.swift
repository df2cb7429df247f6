@preconcurrency import Glibc
import SystoleCLI

// Each line goes out as it is printed, also into a pipe or a file (`systole monitor | jq`, `systole monitor >
// hr.log`): a block-buffered standard output would hold measurements back until exit and lose them on Ctrl-C.
setvbuf(stdout, nil, _IOLBF, 0)
exit(await SystoleCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
