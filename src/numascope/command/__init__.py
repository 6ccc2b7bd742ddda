"""The command kit every command shares: flags, output, the runner."""
