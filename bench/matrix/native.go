package matrix

// DriverNative measures C tools between the same two namespaces: the
// module's perf_test for kquic, iperf3 for tcp, openssl s_server and
// s_client -ktls for ktls.
const DriverNative = Driver("native")

func init() {
	if err := RegisterDriver(DriverNative, DriverSpec{Column: "(C)", Modes: []Mode{"bulk"}, ReadMessage: true, Kernel: true}); err != nil {
		panic(err)
	}
}
