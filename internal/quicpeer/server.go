package quicpeer

import "crypto/tls"

func tls13Server(c *Conn) *tls.QUICConn {
	return tls.QUICServer(&tls.QUICConfig{TLSConfig: c.tlsConfig()})
}
