// A real decoder-only transformer training step on the CPU (fp32): forward, loss, backward and AdamW, built from
// the same kernels that calibration times (OpenBLAS GEMMs, the attention, norm and activation loops). It closes
// the loop: podsim predicts this step from a calibration profile, and the two are compared.
#pragma once
#include <chrono>
#include <memory>
#include <vector>

namespace podsim::calib {

struct TinyGpt {
    int layers = 4;
    int hidden = 512;
    int heads = 8;
    int ffn = 2048;
    int vocab = 8192;
    int seq = 512;
    int micro_batch = 2;
    int micro_batches = 2;  // gradient accumulation steps per optimizer step
};

// One timed region of the step, named as podsim names the op it computes ("qkv", "core.qk", "mlp.down.wgrad";
// outside the layers "embedding.lookup", "logits", "cross_entropy", "optimizer"), for a Chrome trace of the step (podsim profile).
struct StepSpan {
    const char* name;
    const char* category;  // "matmul", "attention", "elementwise", "optimizer"
    int layer;             // -1 outside the layers
    double start_s, dur_s;  // from the recorder's clock origin
};

class CpuTrainStep {
public:
    // Record every region of the following steps into `sink` (nullptr: stop); times from `origin`.
    void record(std::vector<StepSpan>* sink, std::chrono::steady_clock::time_point origin);
    explicit CpuTrainStep(const TinyGpt& shape);
    ~CpuTrainStep();
    // One optimizer step over all micro-batches; returns the mean loss.
    float step();
    // The same in two halves, for data parallelism: forward and backward of every micro-batch (gradients
    // accumulated), then the AdamW update. Between them the gradients can be all-reduced in place.
    float accumulate();
    void apply();
    std::vector<std::vector<float>*> gradients();  // one tensor each, in a fixed order
    long parameters() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The fastest of `steps` optimizer steps after one warm-up step (as calibration, the least disturbed figure).
double measure_train_step_s(const TinyGpt& shape, int steps);

}  // namespace podsim::calib
