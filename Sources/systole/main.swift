import SystoleCLI

#if canImport(Glibc)
import Glibc
#endif

exit(await SystoleCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
