#include "models/calibration/cpu_train_step.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace podsim::calib {

namespace {

using Vec = std::vector<float>;

// C[M,N] = alpha op(A) op(B) + beta C, row-major, with explicit leading dimensions.
void gemm(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda,
                B, ldb, beta, C, ldc);
}

void init(Vec& v, size_t n, float scale, unsigned seed) {
    v.resize(n);
    unsigned x = seed * 2654435761u + 1;
    for (auto& e : v) {
        x = x * 1664525u + 1013904223u;
        e = scale * ((x >> 8) * (1.0f / 16777216.0f) - 0.5f);
    }
}

void layernorm_fwd(const float* x, float* y, float* mean, float* rstd, const Vec& g, const Vec& b, int T, int h) {
    for (int i = 0; i < T; ++i) {
        const float* r = x + size_t(i) * h;
        float m = 0, v = 0;
        for (int j = 0; j < h; ++j) m += r[j];
        m /= h;
        for (int j = 0; j < h; ++j) v += (r[j] - m) * (r[j] - m);
        const float s = 1.0f / std::sqrt(v / h + 1e-5f);
        mean[i] = m, rstd[i] = s;
        float* o = y + size_t(i) * h;
        for (int j = 0; j < h; ++j) o[j] = (r[j] - m) * s * g[j] + b[j];
    }
}

// dx += LN backward; dg, db accumulate.
void layernorm_bwd(const float* x, const float* dy, const float* mean, const float* rstd, const Vec& g, float* dx,
                   Vec& dg, Vec& db, int T, int h) {
    for (int i = 0; i < T; ++i) {
        const float* r = x + size_t(i) * h;
        const float* d = dy + size_t(i) * h;
        float a = 0, c = 0;
        for (int j = 0; j < h; ++j) {
            const float xh = (r[j] - mean[i]) * rstd[i];
            const float dg_j = d[j] * g[j];
            a += dg_j, c += dg_j * xh;
            dg[j] += d[j] * xh, db[j] += d[j];
        }
        a /= h, c /= h;
        float* o = dx + size_t(i) * h;
        for (int j = 0; j < h; ++j) {
            const float xh = (r[j] - mean[i]) * rstd[i];
            o[j] += rstd[i] * (d[j] * g[j] - a - xh * c);
        }
    }
}

constexpr float kC = 0.7978845608f, kA = 0.044715f;

}  // namespace

struct CpuTrainStep::Impl {
    TinyGpt s;
    int T, h, f, V, hd;
    struct Layer {
        Vec ln1g, ln1b, wqkv, wo, ln2g, ln2b, w1, w2;                // parameters
        Vec d_ln1g, d_ln1b, d_wqkv, d_wo, d_ln2g, d_ln2b, d_w1, d_w2;  // gradients
        Vec x, ln1, m1, r1, qkv, p, o, x1, ln2, m2, r2, u, g;         // saved activations
    };
    std::vector<Layer> L;
    Vec emb, wout, lnfg, lnfb, d_emb, d_wout, d_lnfg, d_lnfb;
    Vec xf, lnf, mf, rf, logits;
    std::vector<int> tokens, targets;
    // Adam state, one flat vector per parameter tensor, in `params()` order.
    std::vector<Vec> adam_m, adam_v;
    int t_step = 0;
    std::vector<StepSpan>* sink = nullptr;
    std::chrono::steady_clock::time_point origin;
    // A region of the step: timed and recorded when a sink is set (no clock is read otherwise).
    struct Region {
        Impl* im;
        const char* name;
        const char* cat;
        int layer;
        std::chrono::steady_clock::time_point t0;
        Region(Impl* i, const char* n, const char* c, int l) : im(i), name(n), cat(c), layer(l) {
            if (im->sink) t0 = std::chrono::steady_clock::now();
        }
        ~Region() {
            if (!im->sink) return;
            const auto t1 = std::chrono::steady_clock::now();
            im->sink->push_back({name, cat, layer, std::chrono::duration<double>(t0 - im->origin).count(),
                                 std::chrono::duration<double>(t1 - t0).count()});
        }
    };

    explicit Impl(const TinyGpt& shape) : s(shape) {
        T = s.micro_batch * s.seq, h = s.hidden, f = s.ffn, V = s.vocab, hd = h / s.heads;
        L.resize(s.layers);
        unsigned seed = 1;
        for (auto& l : L) {
            l.ln1g.assign(h, 1.0f), l.ln1b.assign(h, 0.0f), l.ln2g.assign(h, 1.0f), l.ln2b.assign(h, 0.0f);
            init(l.wqkv, size_t(h) * 3 * h, 0.04f, seed++);
            init(l.wo, size_t(h) * h, 0.04f, seed++);
            init(l.w1, size_t(h) * f, 0.04f, seed++);
            init(l.w2, size_t(f) * h, 0.04f, seed++);
            l.x.resize(size_t(T) * h), l.ln1.resize(size_t(T) * h), l.m1.resize(T), l.r1.resize(T);
            l.qkv.resize(size_t(T) * 3 * h), l.p.resize(size_t(s.micro_batch) * s.heads * s.seq * s.seq);
            l.o.resize(size_t(T) * h), l.x1.resize(size_t(T) * h), l.ln2.resize(size_t(T) * h);
            l.m2.resize(T), l.r2.resize(T), l.u.resize(size_t(T) * f), l.g.resize(size_t(T) * f);
        }
        init(emb, size_t(V) * h, 0.04f, seed++);
        init(wout, size_t(h) * V, 0.04f, seed++);
        lnfg.assign(h, 1.0f), lnfb.assign(h, 0.0f);
        xf.resize(size_t(T) * h), lnf.resize(size_t(T) * h), mf.resize(T), rf.resize(T), logits.resize(size_t(T) * V);
        tokens.resize(T), targets.resize(T);
        for (auto* p : params()) adam_m.emplace_back(p->size(), 0.0f), adam_v.emplace_back(p->size(), 0.0f);
    }

    std::vector<Vec*> params() {
        std::vector<Vec*> v{&emb, &wout, &lnfg, &lnfb};
        for (auto& l : L) v.insert(v.end(), {&l.ln1g, &l.ln1b, &l.wqkv, &l.wo, &l.ln2g, &l.ln2b, &l.w1, &l.w2});
        return v;
    }
    std::vector<Vec*> grads() {
        std::vector<Vec*> v{&d_emb, &d_wout, &d_lnfg, &d_lnfb};
        for (auto& l : L) v.insert(v.end(), {&l.d_ln1g, &l.d_ln1b, &l.d_wqkv, &l.d_wo, &l.d_ln2g, &l.d_ln2b, &l.d_w1, &l.d_w2});
        return v;
    }

    template <class F>
    void span(const char* name, const char* cat, int layer, F&& fn) {
        Region r(this, name, cat, layer);
        fn();
    }

    float micro_batch(int mb) {
        for (int i = 0; i < T; ++i) tokens[i] = (i * 7919 + mb * 104729) % V, targets[i] = (i * 6007 + mb * 31) % V;
        // ---- forward ----
        Vec x(size_t(T) * h), tmp(size_t(T) * h);
        {
            Region r(this, "embedding.lookup", "elementwise", -1);
            for (int i = 0; i < T; ++i) std::copy_n(&emb[size_t(tokens[i]) * h], h, &x[size_t(i) * h]);
        }
        const float scale = 1.0f / std::sqrt(float(hd));
        for (int li = 0; li < s.layers; ++li) {
            auto& l = L[li];
            l.x = x;
            {
                Region r(this, "norm1", "elementwise", li);
                layernorm_fwd(l.x.data(), l.ln1.data(), l.m1.data(), l.r1.data(), l.ln1g, l.ln1b, T, h);
            }
            {
                Region r(this, "qkv", "matmul", li);
                gemm(false, false, T, 3 * h, h, 1, l.ln1.data(), h, l.wqkv.data(), 3 * h, 0, l.qkv.data(), 3 * h);
            }
            for (int b = 0; b < s.micro_batch; ++b)
                for (int a = 0; a < s.heads; ++a) {
                    const float* Q = &l.qkv[size_t(b) * s.seq * 3 * h + a * hd];
                    float* P = &l.p[(size_t(b) * s.heads + a) * s.seq * s.seq];
                    span("core.qk", "attention", li, [&] {
                        gemm(false, true, s.seq, s.seq, hd, scale, Q, 3 * h, Q + h, 3 * h, 0, P, s.seq);
                    });
                    span("core.softmax_dropout", "attention", li, [&] {
                        for (int i = 0; i < s.seq; ++i) {
                            float* r = P + size_t(i) * s.seq;
                            float mx = r[0], sum = 0;
                            for (int j = 1; j <= i; ++j) mx = std::max(mx, r[j]);
                            for (int j = 0; j <= i; ++j) sum += (r[j] = std::exp(r[j] - mx));
                            for (int j = 0; j <= i; ++j) r[j] /= sum;
                            for (int j = i + 1; j < s.seq; ++j) r[j] = 0;
                        }
                    });
                    span("core.pv", "attention", li, [&] {
                        gemm(false, false, s.seq, hd, s.seq, 1, P, s.seq, Q + 2 * h, 3 * h, 0,
                             &l.o[size_t(b) * s.seq * h + a * hd], h);
                    });
                }
            // Residual adds as their own passes, as podsim's op list has them (residual_dropout1/2).
            span("attn.proj", "matmul", li, [&] { gemm(false, false, T, h, h, 1, l.o.data(), h, l.wo.data(), h, 0, tmp.data(), h); });
            span("residual_dropout1", "elementwise", li, [&] { for (size_t i = 0; i < tmp.size(); ++i) l.x1[i] = l.x[i] + tmp[i]; });
            span("norm2", "elementwise", li, [&] { layernorm_fwd(l.x1.data(), l.ln2.data(), l.m2.data(), l.r2.data(), l.ln2g, l.ln2b, T, h); });
            span("mlp.up", "matmul", li, [&] { gemm(false, false, T, f, h, 1, l.ln2.data(), h, l.w1.data(), f, 0, l.u.data(), f); });
            span("mlp.act", "elementwise", li, [&] {
for (size_t i = 0; i < l.u.size(); ++i) {
                const float v = l.u[i];
                l.g[i] = 0.5f * v * (1 + std::tanh(kC * (v + kA * v * v * v)));
            }
});
            span("mlp.down", "matmul", li, [&] { gemm(false, false, T, h, f, 1, l.g.data(), f, l.w2.data(), h, 0, tmp.data(), h); });
            span("residual_dropout2", "elementwise", li, [&] { for (size_t i = 0; i < tmp.size(); ++i) x[i] = l.x1[i] + tmp[i]; });
        }
        xf = x;
        span("final_norm", "elementwise", -1, [&] { layernorm_fwd(xf.data(), lnf.data(), mf.data(), rf.data(), lnfg, lnfb, T, h); });
        span("logits", "matmul", -1, [&] { gemm(false, false, T, V, h, 1, lnf.data(), h, wout.data(), V, 0, logits.data(), V); });
        float loss = 0;
        const float inv_tokens = 1.0f / (float(T) * s.micro_batches);
        // Softmax cross-entropy as podsim prices it: the forward (logits become probabilities in place) and its
        // backward (probabilities become dlogits), two ops.
        span("cross_entropy", "elementwise", -1, [&] {
for (int i = 0; i < T; ++i) {
            float* r = &logits[size_t(i) * V];
            float mx = r[0], sum = 0;
            for (int j = 1; j < V; ++j) mx = std::max(mx, r[j]);
            for (int j = 0; j < V; ++j) sum += (r[j] = std::exp(r[j] - mx));
            for (int j = 0; j < V; ++j) r[j] /= sum;
            loss -= std::log(std::max(r[targets[i]], 1e-30f));
        }
});
        span("cross_entropy.bwd", "elementwise", -1, [&] {
for (int i = 0; i < T; ++i) {
            float* r = &logits[size_t(i) * V];
            r[targets[i]] -= 1;
            for (int j = 0; j < V; ++j) r[j] *= inv_tokens;
        }
});
        // ---- backward ----
        span("logits.wgrad", "matmul", -1, [&] { gemm(true, false, h, V, T, 1, lnf.data(), h, logits.data(), V, 1, d_wout.data(), V); });
        Vec dlnf(size_t(T) * h), dx(size_t(T) * h, 0.0f);
        span("logits.dgrad", "matmul", -1, [&] { gemm(false, true, T, h, V, 1, logits.data(), V, wout.data(), V, 0, dlnf.data(), h); });
        span("final_norm.bwd", "elementwise", -1, [&] { layernorm_bwd(xf.data(), dlnf.data(), mf.data(), rf.data(), lnfg, dx.data(), d_lnfg, d_lnfb, T, h); });
        Vec dg(size_t(T) * f), dln(size_t(T) * h), dqkv(size_t(T) * 3 * h), dO(size_t(T) * h), dP(size_t(s.seq) * s.seq);
        for (int li = s.layers - 1; li >= 0; --li) {
            auto& l = L[li];
            // MLP: x2 = x1 + gelu(ln2 W1) W2
            span("mlp.down.wgrad", "matmul", li, [&] { gemm(true, false, f, h, T, 1, l.g.data(), f, dx.data(), h, 1, l.d_w2.data(), h); });
            span("mlp.down.dgrad", "matmul", li, [&] { gemm(false, true, T, f, h, 1, dx.data(), h, l.w2.data(), h, 0, dg.data(), f); });
            span("mlp.act.bwd", "elementwise", li, [&] {
for (size_t i = 0; i < dg.size(); ++i) {
                const float v = l.u[i], t = std::tanh(kC * (v + kA * v * v * v));
                dg[i] *= 0.5f * (1 + t) + 0.5f * v * (1 - t * t) * kC * (1 + 3 * kA * v * v);
            }
});
            span("mlp.up.wgrad", "matmul", li, [&] { gemm(true, false, h, f, T, 1, l.ln2.data(), h, dg.data(), f, 1, l.d_w1.data(), f); });
            span("mlp.up.dgrad", "matmul", li, [&] { gemm(false, true, T, h, f, 1, dg.data(), f, l.w1.data(), f, 0, dln.data(), h); });
            span("norm2.bwd", "elementwise", li, [&] { layernorm_bwd(l.x1.data(), dln.data(), l.m2.data(), l.r2.data(), l.ln2g, dx.data(), l.d_ln2g, l.d_ln2b, T, h); });
            // Attention: x1 = x + attn(ln1) Wo
            span("attn.proj.wgrad", "matmul", li, [&] { gemm(true, false, h, h, T, 1, l.o.data(), h, dx.data(), h, 1, l.d_wo.data(), h); });
            span("attn.proj.dgrad", "matmul", li, [&] { gemm(false, true, T, h, h, 1, dx.data(), h, l.wo.data(), h, 0, dO.data(), h); });
            for (int b = 0; b < s.micro_batch; ++b)
                for (int a = 0; a < s.heads; ++a) {
                    const size_t row0 = size_t(b) * s.seq;
                    const float* Q = &l.qkv[row0 * 3 * h + a * hd];
                    const float* P = &l.p[(size_t(b) * s.heads + a) * s.seq * s.seq];
                    const float* dOh = &dO[row0 * h + a * hd];
                    float* dQ = &dqkv[row0 * 3 * h + a * hd];
                    span("core.pv.bwd", "attention", li, [&] {
                        gemm(false, true, s.seq, s.seq, hd, 1, dOh, h, Q + 2 * h, 3 * h, 0, dP.data(), s.seq);
                        gemm(true, false, s.seq, hd, s.seq, 1, P, s.seq, dOh, h, 0, dQ + 2 * h, 3 * h);  // dV
                    });
                    span("core.softmax_dropout.bwd", "attention", li, [&] {
                        for (int i = 0; i < s.seq; ++i) {  // dS = P (dP - rowsum(P dP)), in place in dP
                            const float* pr = P + size_t(i) * s.seq;
                            float* d = &dP[size_t(i) * s.seq];
                            float dot = 0;
                            for (int j = 0; j <= i; ++j) dot += pr[j] * d[j];
                            for (int j = 0; j < s.seq; ++j) d[j] = j <= i ? pr[j] * (d[j] - dot) : 0;
                        }
                    });
                    span("core.qk.bwd", "attention", li, [&] {
                        gemm(false, false, s.seq, hd, s.seq, scale, dP.data(), s.seq, Q + h, 3 * h, 0, dQ, 3 * h);  // dQ
                        gemm(true, false, s.seq, hd, s.seq, scale, dP.data(), s.seq, Q, 3 * h, 0, dQ + h, 3 * h);   // dK
                    });
                }
            span("qkv.wgrad", "matmul", li, [&] {
                gemm(true, false, h, 3 * h, T, 1, l.ln1.data(), h, dqkv.data(), 3 * h, 1, l.d_wqkv.data(), 3 * h);
            });
            span("qkv.dgrad", "matmul", li, [&] { gemm(false, true, T, h, 3 * h, 1, dqkv.data(), 3 * h, l.wqkv.data(), 3 * h, 0, dln.data(), h); });
            span("norm1.bwd", "elementwise", li, [&] { layernorm_bwd(l.x.data(), dln.data(), l.m1.data(), l.r1.data(), l.ln1g, dx.data(), l.d_ln1g, l.d_ln1b, T, h); });
        }
        span("embedding.grad", "elementwise", -1, [&] {
for (int i = 0; i < T; ++i) {  // embedding: scatter-add the input gradient
            float* e = &d_emb[size_t(tokens[i]) * h];
            const float* d = &dx[size_t(i) * h];
            for (int j = 0; j < h; ++j) e[j] += d[j];
        }
});
        return loss / T;
    }

    float accumulate() {
        auto ps = params();
        auto gs = grads();
        for (size_t i = 0; i < ps.size(); ++i) gs[i]->assign(ps[i]->size(), 0.0f);
        float loss = 0;
        for (int mb = 0; mb < s.micro_batches; ++mb) loss += micro_batch(mb);
        return loss / s.micro_batches;
    }

    void apply() {
        auto ps = params();
        auto gs = grads();
        ++t_step;
        const float lr = 1e-3f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.01f;
        const float c1 = 1 - std::pow(b1, float(t_step)), c2 = 1 - std::pow(b2, float(t_step));
span("optimizer", "optimizer", -1, [&] {
        for (size_t i = 0; i < ps.size(); ++i) {
            Vec& p = *ps[i];
            const Vec& g = *gs[i];
            Vec& m = adam_m[i];
            Vec& v = adam_v[i];
            for (size_t k = 0; k < p.size(); ++k) {
                m[k] = b1 * m[k] + (1 - b1) * g[k];
                v[k] = b2 * v[k] + (1 - b2) * g[k] * g[k];
                p[k] -= lr * ((m[k] / c1) / (std::sqrt(v[k] / c2) + eps) + wd * p[k]);
            }
        }
});
    }

    float step() {
        const float loss = accumulate();
        apply();
        return loss;
    }
};

CpuTrainStep::CpuTrainStep(const TinyGpt& shape) : impl_(std::make_unique<Impl>(shape)) {}
void CpuTrainStep::record(std::vector<StepSpan>* sink, std::chrono::steady_clock::time_point origin) {
    impl_->sink = sink, impl_->origin = origin;
}
CpuTrainStep::~CpuTrainStep() = default;
float CpuTrainStep::step() { return impl_->step(); }
float CpuTrainStep::accumulate() { return impl_->accumulate(); }
void CpuTrainStep::apply() { impl_->apply(); }
std::vector<std::vector<float>*> CpuTrainStep::gradients() { return impl_->grads(); }
long CpuTrainStep::parameters() const {
    long n = 0;
    for (auto* p : impl_->params()) n += static_cast<long>(p->size());
    return n;
}

double measure_train_step_s(const TinyGpt& shape, int steps) {
    CpuTrainStep t(shape);
    t.step();  // warm-up
    std::vector<double> times;
    for (int i = 0; i < steps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        t.step();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return *std::min_element(times.begin(), times.end());
}

}  // namespace podsim::calib
