//go:build !linux

package interop

type kernelLog struct{}

func openKernelLog(bool) *kernelLog { return nil }

func (*kernelLog) save(string) []string { return nil }

func enableModuleDebug() func() { return func() {} }
