package reference

// sizes are the message sizes of every published table: 1, 4, 16, 64 KiB.
var sizes = []int{1024, 4096, 16384, 65536}

const (
	readmeURL   = "https://github.com/lxin/quic/blob/"
	readmeTitle = "lxin/quic README.md, performance tests with iperf"
	iperf100G   = "100G physical NIC; iperf3 fork github.com/lxin/iperf (iperf3 -c ADDR --quic -l SIZE, --no-cryption for QUIC without 1-RTT encryption); kTLS by github.com/Mellanox/iperf_ssl; TCP GSO off by a kernel patch (sk_can_gso)"
	iperf10G    = "10G physical NIC; iperf3 fork github.com/lxin/iperf (iperf3 -c ADDR --quic); kTLS by github.com/Mellanox/iperf_ssl"
	v9Title     = "[PATCH net-next v9 00/15] net: introduce QUIC infrastructure and core subcomponents (cover letter, Xin Long)"
	v9URL       = "https://lore.kernel.org/netdev/cover.1770042461.git.lucien.xin@gmail.com/"
)

var readme2024 = Source{
	Title:  readmeTitle,
	URL:    readmeURL + "011c7b3bbffe1e5628b14c4663959a2b94791182/README.md",
	Commit: "011c7b3bbffe1e5628b14c4663959a2b94791182",
	Date:   "2024-05-08",
	Setup:  iperf100G,
}

// ReadmeKTLS is the module README's QUIC | kTLS table (2024-05-08, unchanged
// through 2026-03-12).
var ReadmeKTLS = Table{
	Source: readme2024, Num: "QUIC", Den: "kTLS", Sizes: sizes,
	Rows: []Row{
		{MTU: 1500, GSO: true, Num: []float64{1.67, 3.04, 3.49, 3.83}, Den: []float64{2.16, 5.04, 7.84, 7.95}},
		{MTU: 1500, GSO: false, Den: []float64{1.73, 3.12, 4.05, 4.28}},
		{MTU: 9000, GSO: true, Num: []float64{2.17, 5.47, 6.45, 7.48}, Den: []float64{2.41, 6.19, 8.66, 8.90}},
		{MTU: 9000, GSO: false, Den: []float64{2.30, 5.69, 8.66, 8.82}},
	},
}

// ReadmeTCP is the module README's QUIC (disable_1rtt_encryption) | TCP
// table (2024-05-08, unchanged through 2026-03-12).
var ReadmeTCP = Table{
	Source: readme2024, Num: "QUIC (no 1-RTT encryption)", Den: "TCP", Sizes: sizes,
	Rows: []Row{
		{MTU: 1500, GSO: true, Num: []float64{2.17, 3.59, 6.09, 6.92}, Den: []float64{2.49, 8.36, 15.1, 16.2}},
		{MTU: 1500, GSO: false, Den: []float64{2.50, 4.12, 4.86, 5.04}},
		{MTU: 9000, GSO: true, Num: []float64{2.47, 7.66, 14.7, 19.1}, Den: []float64{2.54, 7.97, 20.3, 31.3}},
		{MTU: 9000, GSO: false, Den: []float64{2.51, 8.34, 18.3, 22.3}},
	},
}

// ReadmeKTLS20240408 is the README's earlier QUIC | kTLS table (10G NIC).
var ReadmeKTLS20240408 = Table{
	Source: Source{Title: readmeTitle, URL: readmeURL + "82793aa4bc527226d7cda1633e4d5509ed582867/README.md",
		Commit: "82793aa4bc527226d7cda1633e4d5509ed582867", Date: "2024-04-08", Setup: iperf10G},
	Num: "QUIC", Den: "kTLS", Sizes: sizes,
	Rows: []Row{
		{MTU: 1500, GSO: true, Num: []float64{1.63, 2.83, 3.17, 3.47}, Den: []float64{2.16, 5.04, 7.84, 7.95}},
		{MTU: 4500, GSO: true, Num: []float64{2.11, 4.12, 3.76, 4.71}, Den: []float64{2.36, 5.97, 8.11, 8.11}},
		{MTU: 9000, GSO: true, Num: []float64{2.11, 5.24, 5.03, 6.79}, Den: []float64{2.41, 6.19, 8.66, 8.90}},
	},
}

// ReadmeKTLS20240407 is the README's first QUIC | kTLS table (10G NIC).
var ReadmeKTLS20240407 = Table{
	Source: Source{Title: readmeTitle, URL: readmeURL + "0fb4ebcf8168c58eed73faad3b44090f531a6797/README.md",
		Commit: "0fb4ebcf8168c58eed73faad3b44090f531a6797", Date: "2024-04-07", Setup: iperf10G},
	Num: "QUIC", Den: "kTLS", Sizes: sizes,
	Rows: []Row{
		{MTU: 1500, GSO: true, Num: []float64{1.63, 2.83, 3.17, 3.47}, Den: []float64{2.08, 4.85, 7.84, 8.46}},
		{MTU: 4096, GSO: true, Num: []float64{2.62, 2.92, 3.30, 3.87}, Den: []float64{2.36, 5.72, 8.12, 8.12}},
		{MTU: 8192, GSO: true, Num: []float64{2.11, 4.10, 4.78, 6.29}, Den: []float64{2.36, 6.12, 8.40, 8.61}},
	},
}

var coverV9 = Source{Title: v9Title, URL: v9URL, Date: "2026-02-02",
	Setup: "100G NIC; iperf3 fork github.com/lxin/iperf (the letter's reference [8])"}

// CoverV9KTLS is the v9 cover letter's QUIC vs. kTLS table.
var CoverV9KTLS = Table{
	Source: coverV9, Num: "QUIC", Den: "kTLS", Sizes: sizes,
	Rows: []Row{
		{MTU: 1500, GSO: true, Num: []float64{2.27, 3.02, 3.36, 3.48}, Den: []float64{3.26, 6.97, 9.74, 10.8}},
		{MTU: 9000, GSO: true, Num: []float64{3.66, 5.87, 7.03, 8.04}, Den: []float64{3.72, 8.92, 11.2, 11.4}},
	},
}

// CoverV9TCP is the v9 cover letter's QUIC(disable_1rtt_encryption) vs.
// TCP table.
var CoverV9TCP = Table{
	Source: coverV9, Num: "QUIC (no 1-RTT encryption)", Den: "TCP", Sizes: sizes,
	Rows: []Row{
		{MTU: 1500, GSO: true, Num: []float64{3.09, 4.46, 5.07, 5.18}, Den: []float64{4.59, 14.2, 21.3, 23.9}},
		{MTU: 9000, GSO: true, Num: []float64{4.60, 8.41, 11.3, 13.5}, Den: []float64{4.65, 14.0, 28.9, 39.2}},
	},
}

// Tables are all the published tables, newest source first.
var Tables = []*Table{&CoverV9KTLS, &CoverV9TCP, &ReadmeKTLS, &ReadmeTCP, &ReadmeKTLS20240408, &ReadmeKTLS20240407}
