// Deterministic noise for the simulators, keyed by what it is for (seed, rank, step, tensor, ...) rather than by
// the order of drawing: a run with a fault draws exactly the same noise as the same seed without it, one rank of
// a node draws what it would draw in the whole job, and a long run is never held in memory to stay reproducible.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace msmon {

// splitmix64's finaliser.
inline std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// A stream of uniforms and normals for one key; draws within the stream are sequential (cheap), streams of
// different keys independent.
class KeyedNoise {
public:
    KeyedNoise(std::uint64_t seed, std::initializer_list<std::int64_t> key) : state_(mix64(seed)) {
        for (std::int64_t k : key) state_ = mix64(state_ ^ static_cast<std::uint64_t>(k));
    }
    double uniform() {  // in (0, 1)
        state_ += 0x9e3779b97f4a7c15ull;
        return (static_cast<double>(mix64(state_) >> 11) + 0.5) * 0x1.0p-53;
    }
    // A standard normal, clamped to ±limit (3 by default): healthy values stay within what the real runs show
    // however long the run.
    double gauss(double limit = 3.0) {
        double z;
        if (spare_ok_) {
            spare_ok_ = false;
            z = spare_;
        } else {
            const double r = std::sqrt(-2.0 * std::log(uniform())), a = 6.283185307179586 * uniform();
            spare_ = r * std::sin(a);
            spare_ok_ = true;
            z = r * std::cos(a);
        }
        return std::clamp(z, -limit, limit);
    }

private:
    std::uint64_t state_;
    double spare_ = 0;
    bool spare_ok_ = false;
};

}  // namespace msmon
