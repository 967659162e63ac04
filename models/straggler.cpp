#include "models/straggler.hpp"

#include <cmath>

namespace podsim {

double expected_max_std_normal(long long n) {
    if (n <= 1) return 0;
    // E[max] = integral over x > 0 of (1 - Phi(x)^n) minus integral over x < 0 of Phi(x)^n (Phi^n is the CDF of the
    // maximum). Phi(x)^n = exp(n log Phi(x)) (Phi from erfc; no overflow or log of 0 on [-9, 9]); both integrands
    // are below 1e-9 beyond |x| = 9 for every n this is asked for. Simpson's rule on each side of 0 (the integrand
    // jumps there), 1,800 intervals each.
    const double dn = double(n);
    auto cdf_max = [&](double x) {
        const double phi = 0.5 * std::erfc(-x / std::sqrt(2.0));
        return phi <= 0 ? 0.0 : std::exp(dn * std::log(phi));
    };
    auto simpson = [](auto f, double a, double b) {
        const int steps = 1800;
        const double h = (b - a) / steps;
        double sum = f(a) + f(b);
        for (int i = 1; i < steps; ++i) sum += f(a + i * h) * (i % 2 ? 4 : 2);
        return sum * h / 3;
    };
    return simpson([&](double x) { return 1 - cdf_max(x); }, 0, 9) - simpson(cdf_max, -9, 0);
}

double slowest_rank_factor(double cv, long long ranks) {
    return cv > 0 ? 1 + cv * expected_max_std_normal(ranks) : 1;
}

}  // namespace podsim
