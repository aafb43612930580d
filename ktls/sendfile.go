//go:build linux

package ktls

import "io"

// ReadFrom implements io.ReaderFrom, so io.Copy(conn, file) sends with
// sendfile(2): the kernel reads the file from the page cache and encrypts it
// into records without the data passing through user space. Other readers
// (and the userspace fallback) are copied with an ordinary loop.
//
// A KeyUpdate the peer requests while ReadFrom runs is answered when it
// returns.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if !c.kernel {
		return io.Copy(writerOnly{c}, r)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.writableLocked(); err != nil {
		return 0, err
	}
	// *net.TCPConn.ReadFrom uses sendfile for an *os.File (or an
	// io.LimitedReader of one), splice for a socket, and a copy otherwise.
	return c.tcp.ReadFrom(r)
}

// writerOnly hides ReadFrom so io.Copy does not recurse.
type writerOnly struct{ io.Writer }
