#include "sizing/sizing_request.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {
namespace {

/// `hi`: the range the layout's own check (TrainingMemoryRequest::validate) gives the degree, so
/// `--tp 0` and `--tp 100000` name the same range ([1, 1024]; `--tp 0` had named [1, 1000000]).
void check_degree(const std::optional<int>& v, const char* flag, int hi) {
  if (v && (*v < 1 || *v > hi)) {
    throw_invalid_coded(flag, "integer_out_of_range", {{"value", std::to_string(*v)}, {"min", "1"}, {"max", std::to_string(hi)}},
                        fmt::format("{} is out of range", *v), fmt::format("an integer in [1, {}]", hi));
  }
}

struct Degrees {
  int tp = 1, pp = 1, dp = 1;
};

Degrees resolve(const SizingRequest& r) {
  Degrees d;
  d.pp = r.pp.value_or(1);
  if (r.task == Task::serve) {
    if (r.tp) {
      d.tp = *r.tp;
    } else if (r.gpus) {
      if (*r.gpus % d.pp != 0) {
        throw_invalid_coded("--gpus", "gpus_not_multiple_of_pins",
                            {{"gpus", fmt::format("{}", *r.gpus)}, {"product", fmt::format("{}", d.pp)},
                             {"layout", fmt::format("pp {}", d.pp)}},
                            fmt::format("{} GPUs do not split into pp {}", *r.gpus, d.pp), fmt::format("a multiple of pp {}", d.pp));
      }
      d.tp = *r.gpus / d.pp;
    }
    if (r.gpus && d.tp * d.pp != *r.gpus) {
      throw_invalid_coded("--gpus", "gpus_not_equal_layout",
                          {{"layout", fmt::format("tp {} × pp {}", d.tp, d.pp)}, {"product", fmt::format("{}", d.tp * d.pp)},
                           {"gpus", fmt::format("{}", *r.gpus)}},
                          fmt::format("--gpus {} but tp {} × pp {} = {}", *r.gpus, d.tp, d.pp, d.tp * d.pp),
                          "--gpus = tp × pp when serving");
    }
    return d;
  }
  d.tp = r.tp.value_or(1);
  if (r.dp) {
    d.dp = *r.dp;
  } else if (r.gpus) {
    if (*r.gpus % (d.tp * d.pp) != 0) {
      throw_invalid_coded("--gpus", "gpus_not_multiple_of_layout",
                          {{"gpus", std::to_string(*r.gpus)}, {"tp", std::to_string(d.tp)}, {"pp", std::to_string(d.pp)},
                           {"product", std::to_string(d.tp * d.pp)}},
                          fmt::format("{} GPUs are not a multiple of tp {} × pp {}", *r.gpus, d.tp, d.pp),
                          fmt::format("a multiple of {}", d.tp * d.pp));
    }
    d.dp = *r.gpus / (d.tp * d.pp);
  }
  if (r.gpus && d.tp * d.pp * d.dp != *r.gpus) {
    throw_invalid_coded("--gpus", "gpus_not_equal_layout",
                        {{"layout", fmt::format("tp {} × pp {} × dp {}", d.tp, d.pp, d.dp)},
                         {"product", fmt::format("{}", d.tp * d.pp * d.dp)}, {"gpus", fmt::format("{}", *r.gpus)}},
                        fmt::format("--gpus {} but tp {} × pp {} × dp {} = {}", *r.gpus, d.tp, d.pp, d.dp, d.tp * d.pp * d.dp),
                        "--gpus = tp × pp × dp");
  }
  return d;
}

}  // namespace

void SizingRequest::validate() const {
  check_degree(gpus, "--gpus", 1'000'000);
  check_degree(tp, "--tp", kMaxParallelDegree);
  check_degree(pp, "--pp", kMaxParallelDegree);
  check_degree(dp, "--dp", kMaxDataParallel);
  if (!(margin >= 0 && margin < 1)) {
    throw_invalid_coded("--margin", "number_out_of_range", {{"value", fmt::format("{}", margin)}, {"range", "[0, 1)"}},
                        fmt::format("{} is out of range", margin), "a fraction in [0, 1), e.g. 0.10");
  }
  if (task == Task::serve) {
    serving_request().validate();
  } else {
    training_request().validate();
  }
}

TrainingMemoryRequest SizingRequest::training_request() const {
  TrainingMemoryRequest r = training;
  r.task = task;
  const Degrees d = resolve(*this);
  r.layout.tp = d.tp;
  r.layout.pp = d.pp;
  r.layout.dp = d.dp;
  return r;
}

ServingMemoryRequest SizingRequest::serving_request() const {
  ServingMemoryRequest r = serving;
  const Degrees d = resolve(*this);
  r.tp = d.tp;
  r.pp = d.pp;
  return r;
}

SizingResult run_sizing(const ModelArch& arch, const SizingRequest& request, const GpuCatalog& catalog) {
  request.validate();
  SizingResult out;
  FitOptions fit;
  fit.margin = request.margin;
  // The count the user gave is one the table tries (trial48: --gpus 1024 with pp 16 × ep 64, or
  // --gpus 128 for a 405B, was sized in the header but the table tried 1…64 only and said that no
  // GPU holds it).
  if (request.gpus && std::find(fit.counts.begin(), fit.counts.end(), *request.gpus) == fit.counts.end()) {
    fit.counts.push_back(*request.gpus);
    std::sort(fit.counts.begin(), fit.counts.end());
  }
  if (request.task == Task::serve) {
    const ServingMemoryRequest r = request.serving_request();
    out.per_gpu = serving_memory(arch, r);
    if (request.explain) out.explanation = explain_serving_memory(arch, r);
    out.fits = fitting_gpus(arch, r, catalog, fit);
    // Encoders and encoder-decoders are sized whole on one GPU (memory_fit.cpp): the TP rule does not apply.
    out.fit_assumption = arch.family == ModelFamily::encoder || arch.family == ModelFamily::encoder_decoder
                             ? std::string("each replica is one GPU holding the whole model (encoder and encoder-decoder "
                                           "models are not split by TP or PP here)")
                             : fit_assumption(r);
  } else {
    const TrainingMemoryRequest r = request.training_request();
    out.per_gpu = training_memory(arch, r);
    if (request.explain) out.explanation = explain_training_memory(arch, r);
    out.fits = fitting_gpus(arch, r, catalog, fit);
    out.fit_assumption = fit_assumption(r);
  }
  return out;
}

}  // namespace gpuplan
