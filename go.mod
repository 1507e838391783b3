module hgrewrite

go 1.26.8

require (
	github.com/spf13/pflag v1.0.10
	github.com/twitchyliquid64/golang-asm v0.15.1
	golang.org/x/arch v0.32.0
	golang.org/x/sys v0.49.0
)
