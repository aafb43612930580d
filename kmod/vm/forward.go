//go:build linux

package vm

import (
	"fmt"
	"net/netip"
)

// A Forward makes a guest port reachable from the host: qemu's user-mode
// network (a second virtio-net device, the guest at ForwardGuestAddr)
// relays HostPort on the host's loopback to GuestPort in the guest. It is
// how a program on the host (a browser) talks to a server the guest runs
// over a kernel feature the host lacks. Nothing else of the guest is
// reachable from outside. (qemu's restrict=on, which would also keep the
// guest from reaching out, drops the guest's UDP answers to a forwarded
// port, so it is not set: a guest with forwards can reach what the host
// reaches, through qemu.)
type Forward struct {
	// Proto is "udp" or "tcp".
	Proto string
	// HostPort is the port on 127.0.0.1; GuestPort the guest's.
	HostPort, GuestPort uint16
}

// ForwardGuestAddr is the guest's address on the forwarding network (qemu's
// user-mode default), where a forwarded server listens; the command finds
// it in $KQVM_FWD_ADDR.
var ForwardGuestAddr = netip.MustParseAddr("10.0.2.15")

// forwardMAC identifies the forwarding device in the guest.
const forwardMAC = "52:54:00:4b:51:46"

// checkForwards says what is wrong with fs, naming the forward.
func checkForwards(fs []Forward) error {
	for _, f := range fs {
		if f.Proto != "udp" && f.Proto != "tcp" {
			return fmt.Errorf("vm: forward %+v: protocol %q: use udp or tcp", f, f.Proto)
		}
		if f.HostPort == 0 || f.GuestPort == 0 {
			return fmt.Errorf("vm: forward %+v: give both ports", f)
		}
	}
	return nil
}

// forwardQemu is the qemu arguments of the forwarding device.
func forwardQemu(fs []Forward) []string {
	if len(fs) == 0 {
		return nil
	}
	nd := "user,id=kqfwd,net=10.0.2.0/24"
	for _, f := range fs {
		nd += fmt.Sprintf(",hostfwd=%s:127.0.0.1:%d-:%d", f.Proto, f.HostPort, f.GuestPort)
	}
	return []string{"-netdev", nd, "-device", "virtio-net-pci,netdev=kqfwd,mac=" + forwardMAC}
}

// forwardNIC is how the guest's init configures the forwarding device.
func forwardNIC() *nicSpec {
	return &nicSpec{MAC: forwardMAC, Addr: ForwardGuestAddr.String() + "/24", MTU: 1500}
}

// forwardEnv is the command's environment entry naming its address.
func forwardEnv() string { return "KQVM_FWD_ADDR=" + ForwardGuestAddr.String() }
