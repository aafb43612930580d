// Package reference holds the throughput figures the kernel QUIC module's
// author published, as data, each table with its source, so that a run's
// ratios can be shown beside theirs.
//
// Two tables are the ones quoted about kernel QUIC: QUIC against kTLS, and
// QUIC without 1-RTT encryption against TCP, in Gbit/s, measured with the
// module author's iperf3 fork (github.com/lxin/iperf, --quic -l SIZE) over
// a 100G NIC at 1, 4, 16 and 64 KiB messages, MTU 1500 and 9000.
//
// Sources, and how the figures changed:
//
//   - lxin/quic README.md at 011c7b3 (2024-05-08, "README: add more test
//     data in performance tests section"): both tables, each with a no-GSO
//     row per MTU where kTLS or TCP ran with GSO off (QUIC had no GSO; its
//     column is empty there). The figures are unchanged through 1e7546b
//     (2026-03-12), the newest README read; later commits only reindented
//     the tables. ReadmeKTLS and ReadmeTCP.
//   - lxin/quic README.md at 82793aa (2024-04-08) and 0fb4ebc (2024-04-07):
//     earlier QUIC | kTLS tables over a 10G NIC, MTU 1500/4500/9000 and
//     1500/4096/8192, without no-GSO rows. ReadmeKTLS20240408 and
//     ReadmeKTLS20240407.
//   - The cover letter of "[PATCH net-next v9 00/15] net: introduce QUIC
//     infrastructure and core subcomponents" (Xin Long, 2026-02-02,
//     Message-ID cover.1770042461.git.lucien.xin@gmail.com): both tables
//     again over a 100G NIC with newer figures, without no-GSO rows.
//     CoverV9KTLS and CoverV9TCP.
//
// The tests parse the tables as published (testdata/) and check every
// figure here against them.
package reference
