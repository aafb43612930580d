package fuzz

import (
	"fmt"
	"os"
)

// MarkLine is the kernel log line a "kmsg" mark writes.
const MarkLine = "WARNING: kqbench fuzz: the oracle test's line"

// Act does what an input's mark says, for tests of the oracles: "kmsg"
// writes [MarkLine] to the kernel log, "crash" crashes the kernel through
// sysrq. Both need root; "crash" belongs in a guest.
func Act(mark string) error {
	switch mark {
	case "kmsg":
		if err := os.WriteFile("/dev/kmsg", []byte(MarkLine+"\n"), 0); err != nil {
			return fmt.Errorf("fuzz: mark kmsg: %w", err)
		}
		return nil
	case "crash":
		os.WriteFile("/proc/sys/kernel/sysrq", []byte("1"), 0)
		if err := os.WriteFile("/proc/sysrq-trigger", []byte("c"), 0); err != nil {
			return fmt.Errorf("fuzz: mark crash: %w", err)
		}
		return nil
	}
	return fmt.Errorf("fuzz: unknown mark %q (kmsg or crash)", mark)
}
