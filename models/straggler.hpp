// The slowest of many ranks. A synchronous step waits for its slowest rank: where ranks' compute speeds differ
// (the same SKU varies chip to chip with power, thermals and binning; Sinha et al., "Not All GPUs Are Created
// Equal", SC22), a job of N ranks runs at its slowest one's pace, which for normally distributed speeds lies
// E[max of N standard normals] standard deviations out. The spread is the scenario's system.rank_speed_cv (a
// cluster's own telemetry); podsim states none of its own.
#pragma once

namespace podsim {

// E[max(Z_1..Z_n)] for n independent standard normal draws: 0 for n = 1, 1/sqrt(pi) for n = 2, 1.5388 for 10,
// 3.2414 for 1000. Numerically integrated (error below 1e-4), n up to limits::max_chips.
double expected_max_std_normal(long long n);

// How much longer the slowest of `ranks` ranks computes than the mean rank: 1 + cv x E[max of ranks normals].
double slowest_rank_factor(double cv, long long ranks);

}  // namespace podsim
