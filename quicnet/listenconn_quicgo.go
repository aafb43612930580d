//go:build !kquic || !linux

package quicnet

import (
	"crypto/tls"
	"net"
)

func init() {
	goListenConn = func(conn net.PacketConn, tlsConf *tls.Config, conf *Config, early bool) (listenerImpl, error) {
		return goListenOn(conn, nil, tlsConf, conf, early)
	}
}
