// Package ratio computes the ratios readers of a throughput table compute
// (kernel QUIC over kernel TLS, unencrypted QUIC over TCP, a cell with GSO
// off over the same cell with it on), each from the repeated samples of its
// two cells, with a 95% confidence interval, and says whether a ratio moved
// between two runs (an A/B of two module builds).
//
// # Method
//
// A ratio is the ratio of the two cells' geometric means, exp(mean(log num)
// - mean(log den)), and its interval is Welch's t interval of that
// difference of log means, transformed back: exp(d ± t(0.975, ν)·se), with
// se² = var(log num)/n + var(log den)/m and ν the Welch-Satterthwaite
// degrees of freedom. It assumes goodput samples log-normal (their spread
// scales with their level, as a throughput's does) and the two cells
// independent (it does not pair samples); Welch's approximation then
// covers the true ratio about 95% of the time (TestCoverage checks it with
// three samples per cell).
//
// Whether a ratio moved between runs A and B is Welch's t test of the
// difference of the two log ratios, D = log R_B - log R_A, whose variance
// is the sum of the four cells' var(log x)/n, with ν from the four terms.
//
// Why not benchmath (which bench.Compare uses for one cell's goodput): its
// distribution-free interval of a median needs at least six samples before
// any interval reaches 95%, and its Mann-Whitney test of three samples
// against three cannot go below p = 0.1, while a matrix cell usually has
// three to nine samples. A ratio of two such cells would always read
// "no interval". The log-normal model gives a finite interval from two
// samples per cell, wide when the samples are few or spread.
//
// Degenerate input never yields NaN: no sample, or a sample that is zero,
// negative or not finite, is an error (a cell that moved nothing has no
// ratio on a log scale); one sample in a cell gives the ratio with the
// infinite interval [0, +Inf] (Interval.Bounded is false), and Compare
// refuses it with ErrTooFew.
//
// # Tables
//
// Table.WriteText prints a ratio table as text: a row per MTU and GSO
// setting (RowLabel), a column per message size, each cell "0.47 [0.44,
// 0.50]" beside the published ratio (package bench/reference), the reason
// for each cell without a ratio, and EmulatedNote under a table from an
// emulated CPU.
package ratio
