#include "api/catalog_reads.hpp"

#include "api/model_fields.hpp"
#include "catalog/filter.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/param_count.hpp"
#include "planner/plan_request.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"
#include "util/text_check.hpp"

namespace gpuplan::api {

using nlohmann::json;

namespace {
ModelSource& models_model(ModelsInput& in) { return in.source; }
}  // namespace

namespace {
template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}
}  // namespace

// ---- gpus ---------------------------------------------------------------------------------

std::span<const FieldDef<GpusInput>> gpus_fields() {
  static const std::vector<FieldDef<GpusInput>> f = {
      {{"name", "", FieldType::string, FieldFace::both, "a GPU name to resolve (tolerant: \"h100\", \"A100-80GB\", ...)"},
       [](GpusInput& in, const json& v) {
         in.name = v.get<std::string>();
         // Given but empty: not the whole list (trial48: `gpus ''` listed every GPU, `history ''` is refused).
         if (in.name.find_first_not_of(" \t") == std::string::npos)
           throw_invalid_coded("name", "value_empty", {{"a_field", "name"}}, "the GPU name is empty",
                               "a GPU name, or no NAME for the whole list");
       }},
  };
  return f;
}

std::vector<const GpuSpec*> run_gpus(const GpusInput& in, const Context& ctx) {
  std::vector<const GpuSpec*> out;
  if (!in.name.empty()) {
    try {
      out.push_back(&ctx.gpus().find(in.name));
    } catch (const Error& e) {
      // At the request's field (a trial found the API's field "" for /api/gpus?name=H1000: the
      // catalog names its error "GPU 'H1000'"), the name typed kept in the message.
      const ErrorCode* c = error_code_of(e);
      if (c == nullptr) rethrow_at(e, "name");
      throw CodedError(e.kind(), "name", fmt::format("{} '{}'", e.message(), in.name), e.expected(), c->code, c->values);
    }
    return out;
  }
  for (const auto& g : ctx.gpus().gpus()) out.push_back(&g);
  return out;
}

json gpu_json(const GpuSpec& g) {
  json flops = json::object();
  for (Dtype d : kAllDtypes) flops[std::string(dtype_name(d))] = opt(g.dense_flops(d));
  return {
      {"name", g.name},
      {"vendor", g.vendor},
      {"architecture", g.architecture},
      {"form_factor", g.form_factor},
      {"aliases", g.aliases},
      {"memory_bytes", g.memory_bytes},
      {"memory_type", g.memory_type},
      {"memory_bandwidth_bytes_per_s", opt(g.memory_bandwidth())},
      {"dense_flops_per_s", flops},
      {"interconnect", g.interconnect},
      {"gpu_link_bytes_per_s", g.gpu_link_bytes_per_s},
      {"usable_memory_bytes", opt(g.usable_memory_bytes)},
      {"nvlink_domain_gpus", opt(g.nvlink_domain_gpus)},
      {"unified_memory", g.unified_memory},
      {"pcie_gen", opt(g.pcie_gen)},
      {"tdp_watts", opt(g.tdp_watts)},
      {"release_year", opt(g.release_year)},
      {"source_ids", g.source_ids},
      {"uncertain_cells", g.uncertain_cells},
  };
}

json gpus_to_json(const GpusInput& in, const std::vector<const GpuSpec*>& gpus) {
  if (!in.name.empty() && gpus.size() == 1) return gpu_json(*gpus.front());
  json arr = json::array();
  for (const GpuSpec* g : gpus) arr.push_back(gpu_json(*g));
  return arr;
}

// ---- models -------------------------------------------------------------------------------

std::span<const FieldDef<ModelsInput>> models_fields() {
  static const std::vector<FieldDef<ModelsInput>> f = [] {
    std::vector<FieldDef<ModelsInput>> v = {
        {{"name", "", FieldType::string, FieldFace::both, "a preset name (see the list); or use a model field"},
         [](ModelsInput& in, const json& x) {
           in.name = x.get<std::string>();
           if (in.name.find_first_not_of(" \t") == std::string::npos)
             throw_invalid_coded("name", "value_empty", {{"a_field", "name"}}, "the model name is empty",
                                 "a preset name, or no NAME for the whole list");
         }},
    };
    auto m = model_fields<ModelsInput, &models_model>();
    v.insert(v.end(), m.begin(), m.end());
    return v;
  }();
  return f;
}

ModelsOutput run_models(const ModelsInput& in, const Context&) {
  ModelSource src = in.source;
  if (!in.name.empty()) {
    if (!src.preset.empty()) throw_invalid("--model", "model named twice (positional NAME and --model)", "one of them");
    src.preset = in.name;
  }
  ModelsOutput out;
  const bool any = !src.preset.empty() || !src.config_path.empty() || !src.safetensors_path.empty() || src.params;
  if (!any) {
    for (const auto& p : list_presets()) out.models.push_back({load_preset(p.short_name), &p});
    return out;
  }
  out.single = true;
  ModelArch a;
  try {
    a = resolve_model(src);
  } catch (const Error& e) {
    // The preset came from the positional NAME, not --model: the error names what was typed
    // (`gpuplan models llama` read "--model: unknown model preset 'llama'").
    if (!in.name.empty() && e.where() == "--model") rethrow_at(e, "name");
    throw;
  }
  out.models.push_back({std::move(a), src.preset.empty() ? nullptr : find_preset(src.preset)});
  return out;
}

namespace {

std::string_view norm_name(NormKind k) {
  switch (k) {
    case NormKind::rms_norm: return "rms_norm";
    case NormKind::layer_norm: return "layer_norm";
    case NormKind::gemma_rms_norm: return "gemma_rms_norm";
    case NormKind::layer_norm_no_bias: return "layer_norm_no_bias";
    case NormKind::non_parametric: return "non_parametric";
  }
  return "rms_norm";
}

json breakdown_json(const ParamBreakdown& p) {
  return {{"embeddings", p.embeddings}, {"attention", p.attention}, {"mlp", p.mlp},     {"experts", p.experts},
          {"router", p.router},         {"norms", p.norms},         {"head", p.head},   {"other", p.other},
          {"active_experts", p.active_experts}, {"total", p.total()}, {"active", p.active()}};
}

json arch_json(const ModelArch& a, const PresetInfo* info) {
  json j = {
      {"name", a.name},
      {"model_type", a.model_type},
      {"family", family_name(a.family)},
      {"source", a.source},
      {"total_params", a.total_params()},
      {"active_params", a.active_params()},
      {"params", breakdown_json(a.params)},
      {"num_layers", a.num_layers},
      {"hidden_size", a.hidden_size},
      {"intermediate_size", a.intermediate_size},
      {"num_attention_heads", a.num_attention_heads},
      {"num_kv_heads", a.num_kv_heads},
      {"head_dim", a.head_dim},
      {"vocab_size", a.vocab_size},
      {"attention", attention_kind_name(a.attention)},
      {"sliding_window", opt(a.sliding_window)},
      {"sliding_window_layers", a.num_sliding_window_layers()},
      {"max_position_embeddings", a.max_position_embeddings > 0 ? json(a.max_position_embeddings) : json(nullptr)},
      {"tied_embeddings", a.tied_embeddings},
      {"torch_dtype", a.torch_dtype.empty() ? json(nullptr) : json(a.torch_dtype)},
      {"mtp_params", a.mtp_params},
      {"checkpoint_bytes", opt(a.checkpoint_bytes)},
      {"notes", a.notes},
  };
  if (a.moe) {
    j["moe"] = {{"num_routed_experts", a.moe->num_routed_experts},
                {"experts_per_token", a.moe->experts_per_token},
                {"num_shared_experts", a.moe->num_shared_experts},
                {"expert_intermediate_size", a.moe->expert_intermediate_size},
                {"num_moe_layers", a.moe->num_moe_layers}};
  }
  if (a.mla) {
    j["mla"] = {{"q_lora_rank", opt(a.mla->q_lora_rank)},
                {"kv_lora_rank", a.mla->kv_lora_rank},
                {"qk_nope_head_dim", a.mla->qk_nope_head_dim},
                {"qk_rope_head_dim", a.mla->qk_rope_head_dim},
                {"v_head_dim", a.mla->v_head_dim}};
  }
  if (!a.geometry.linears.empty()) {  // the model layer's one geometry (model/geometry.hpp)
    const LayerGeometry& g = a.geometry;
    json linears = json::array();
    for (const auto& l : g.linears) {
      linears.push_back({{"name", l.name}, {"lora_target", l.lora_target}, {"role", linear_role_name(l.role)},
                         {"d_in", l.d_in}, {"d_out", l.d_out}, {"copies", l.copies}, {"active_copies", l.active_copies},
                         {"layers", l.layers}, {"bias", l.bias}, {"tied", l.tied}, {"params", l.params()}});
    }
    j["geometry"] = {{"attention_layers", g.attention_layers}, {"kv_cache_layers", g.kv_cache_layers},
                     {"dense_mlp_layers", g.dense_mlp_layers},  {"moe_layers", g.moe_layers},
                     {"ssm_layers", g.ssm_layers},              {"kv_cache_width", g.attention.kv_cache_width},
                     {"activation", mlp_activation_name(g.activation)}, {"norm", norm_name(g.norm)},
                     {"parallel_attention", g.parallel_attention}, {"linears", linears}};
  }
  if (info) {
    j["hf_id"] = info->hf_id;
    j["provenance_class"] = info->provenance_class;
    j["hf_url"] = info->hf_url;
    // The address alone, so that it is a link; its revision apart (trial10c: "URL (revision
    // 367d8cb)" in one string was not a usable link).
    j["config_copied_from"] = info->config_url;
    j["config_revision"] = info->config_revision.empty() ? json(nullptr) : json(info->config_revision);
  }
  return j;
}

}  // namespace

json to_json(const ModelsOutput& out) {
  if (out.single && out.models.size() == 1) return arch_json(out.models.front().arch, out.models.front().preset);
  json arr = json::array();
  for (const auto& m : out.models) arr.push_back(arch_json(m.arch, m.preset));
  return arr;
}

// ---- offers -------------------------------------------------------------------------------

std::span<const FieldDef<OffersInput>> offers_fields() {
  static const std::vector<FieldDef<OffersInput>> f = {
      {{"filter", "", FieldType::string, FieldFace::both,
        "filter, e.g. gpu=H100 gpus>=8 vram>=80GB price<=30 (docs/filter-language.md); query parameter q"},
       [](OffersInput& in, const json& v) { in.filter = v.get<std::string>(); }},
      {{"sort", "--sort", FieldType::string, FieldFace::both, "price_per_gpu_hour (default), price_per_vram_gb, bandwidth or price"},
       [](OffersInput& in, const json& v) { in.sort = v.get<std::string>(); }},
      {{"limit", "--limit", FieldType::integer, FieldFace::both, "show at most N offers (0 = all)"},
       [](OffersInput& in, const json& v) {
         if (v.get<double>() < 0)
           throw_invalid_coded("", "negative", {{"value", field_value_text(v)}}, fmt::format("{} is negative", field_value_text(v)), "an integer ≥ 0");
         // With its range (trial48: 1e99 read "far outside the field's range", no range).
         if (v.get<double>() > 1e9)
           throw_invalid_coded("", "integer_out_of_range", {{"value", field_value_text(v)}, {"min", "0"}, {"max", "1000000000"}},
                               fmt::format("{} is out of range", field_value_text(v)), "an integer in [0, 1000000000] (0 = all)");
         in.limit = json_as<std::size_t>(v);
       }},
      {{"spot", "--spot", FieldType::boolean, FieldFace::both, "use spot prices instead of on-demand (--price-kind spot)"},
       [](OffersInput& in, const json& v) { in.spot = v.get<bool>(); }},
      {{"price_kind", "--price-kind", FieldType::string, FieldFace::both,
        "the price listed, sorted and filtered: on-demand (default), spot, reserved-1w, reserved-1m, reserved-3m, "
        "reserved-6m, reserved-1y or reserved-3y (reserved kinds commit to their term: 7 days, 1, 3 or 6 months of "
        "730 h, 1 or 3 years)"},
       [](OffersInput& in, const json& v) { in.price_kind = v.get<std::string>(); }},
      {{"include_flagged", "--include-flagged", FieldType::boolean, FieldFace::both,
        "also show offers excluded by a quality flag, and list flagged, stale and undated prices in plain sort order "
        "(default: clean dated prices first, then stale, undated, flagged; --group-by leaves flagged prices out)"},
       [](OffersInput& in, const json& v) { in.include_flagged = v.get<bool>(); }},
      {{"max_price_age", "--max-price-age", FieldType::duration, FieldFace::both,
        "a price older than this (a bare number is days, or 30d/4w) is stale: listed after fresher ones (default 30)"},
       [](OffersInput& in, const json& v) {
         in.stale_days = parse_duration_seconds(duration_text(v), "--max-price-age", 86400.0) / 86400.0;  // bare: days
       }},
      {{"stale_days", "--stale-days", FieldType::number, FieldFace::both,
        "the same limit as --max-price-age, in days (default 30)", "max_price_age"},
       [](OffersInput& in, const json& v) { in.stale_days = v.get<double>(); }},
      {{"fresh_days", "--fresh-days", FieldType::number, FieldFace::both,
        "a price at most this many days old is fresh; between this and --max-price-age it is aging (default 7)"},
       [](OffersInput& in, const json& v) { in.fresh_days = v.get<double>(); }},
      {{"today", "--today", FieldType::string, FieldFace::both,
        "today's date YYYY-MM-DD for age and freshness (default: the system clock, UTC)"},
       [](OffersInput& in, const json& v) { in.today = v.get<std::string>(); }},
      {{"group_by", "--group-by", FieldType::string, FieldFace::both,
        "gpu or provider: min / median / max USD per GPU-hour and the number of offers per group"},
       [](OffersInput& in, const json& v) { in.group_by = v.get<std::string>(); }},
  };
  return f;
}

OffersOutput run_offers(const OffersInput& in, const Context& ctx) {
  OffersOutput out;
  OfferQuery& q = out.query;
  q.filter = in.filter;
  q.sort = in.sort;
  if (in.limit > 0) q.limit = in.limit;
  q.price_kind = in.spot ? PriceKind::spot : PriceKind::on_demand;
  if (!in.price_kind.empty()) {
    std::optional<PriceKind> kind;
    std::string allowed;
    for (PriceKind k : kPriceKinds) {
      allowed += (allowed.empty() ? "" : ", ") + std::string(price_kind_name(k));
      if (price_kind_name(k) == in.price_kind) kind = k;
    }
    if (!kind)
      throw_invalid_coded("--price-kind", "unknown_choice", {{"value", in.price_kind}, {"allowed", allowed}},
                          "unknown price kind \"" + in.price_kind + "\"", allowed);
    if (in.spot && *kind != PriceKind::spot)
      throw_invalid_coded("--price-kind", "both_given", {{"a_field", "spot"}, {"b_field", "price_kind"}},
                          "--spot with --price-kind " + in.price_kind, "one of them");
    q.price_kind = *kind;
  }
  q.include_excluded = in.include_flagged;
  q.evidence_first = !in.include_flagged;  // the planner's price order (docs/freshness.md)
  q.now_date = in.today.empty() ? ctx.clock().today() : in.today;
  q.stale_after_days = in.stale_days;
  if (!in.group_by.empty()) {
    out.group_key = parse_offer_group_key(in.group_by);
    if (!out.group_key)
      throw_invalid_coded("--group-by", "unknown_choice", {{"value", in.group_by}, {"allowed", "gpu, provider"}},
                          "unknown grouping \"" + in.group_by + "\"", "gpu or provider");
    // Groups are listed by their cheapest price; another sort key was silently ignored (trial50 #20).
    if (in.sort != kSortPricePerGpuHour)
      throw_invalid_coded("--sort", "both_given", {{"a_field", "sort"}, {"b_field", "group_by"}},
                          "--sort " + in.sort + " with --group-by (groups are listed by their cheapest price per GPU-hour)",
                          "one of them");
  }
  out.limits = FreshnessLimits{in.fresh_days, in.stale_days};
  try {
    out.limits.validate();
  } catch (const Error& e) {
    // fresh > stale: blame the limit the user moved. A trial's `--stale-days 0` (fresh at its
    // default 7) blamed --fresh-days, which it never typed.
    const bool fresh_moved = in.fresh_days != OffersInput{}.fresh_days;
    rethrow_at(e, e.where() == "fresh_max_days" && fresh_moved ? "--fresh-days" : "--stale-days");
  }
  try {
    q.validate();
  } catch (const FilterError&) {
    throw;
  } catch (const Error& e) {
    if (e.where() == "sort") rethrow_at(e, "--sort");
    if (e.where() == "limit") rethrow_at(e, "--limit");
    if (e.where() == "now_date") rethrow_at(e, "--today");
    if (e.where() == "stale_after_days") rethrow_at(e, "--stale-days");
    throw;
  }
  // --group-by sees every match; a page reads only its rows (the store walks a price index and
  // stops at the limit) and the database counts the matches for the footer (issue 12: reading
  // every match to count them made the first page linear in the catalog).
  OfferQuery all = q;
  if (out.group_key) all.limit.reset();
  const std::shared_ptr<const std::vector<Offer>> matching = ctx.query_offers(all);
  const std::vector<Offer>& offers = *matching;
  // --today before every price read: each age would be negative and every price "fresh" (the
  // planner's rule and message code, catalog/freshness.hpp). Judged over every matching offer,
  // not the page: with a limit the page's earliest date was later than the catalog's, so the
  // error's "earliest" changed with --limit and a date between the two was refused (trial of
  // issue 10, D9b). The whole match is read only when the page's own dates refuse the date.
  if (!in.today.empty()) {
    try {
      require_today_not_before_observations(in.today, offers, "--today");
    } catch (const Error&) {
      if (!all.limit) throw;
      OfferQuery every = all;
      every.limit.reset();
      require_today_not_before_observations(in.today, *ctx.query_offers(every), "--today");
    }
  }
  out.counts = ctx.store_counts();
  out.matched = out.group_key || !q.limit ? offers.size() : ctx.count_offers(q);
  if (out.group_key) {
    // --group-by sees every match; the limit cuts the groups.
    out.groups = group_offer_prices(offers, *out.group_key, q.price_kind, !in.include_flagged);
    out.grouped_offers = offers.size();
    out.groups_total = out.groups.size();
    for (const auto& g : out.groups) out.flagged_prices_total += g.flagged_offers;
    if (q.limit && out.groups.size() > *q.limit) out.groups.resize(*q.limit);
    return out;
  }
  const std::size_t shown = q.limit ? std::min(*q.limit, offers.size()) : offers.size();
  out.rows.reserve(shown);
  for (std::size_t i = 0; i < shown; ++i) {
    const Offer& o = offers[i];
    OfferRow r;
    if (const PriceObservation* p = o.latest_price(q.price_kind)) {
      r.price = *p;
    } else {
      // No price of the listed kind: the offer's price of another kind, shown with its kind (a
      // reserved-only quote printed "unknown" for its price, source and date).
      for (PriceKind k : kPriceKinds) {
        const PriceObservation* other = k == q.price_kind ? nullptr : o.latest_price(k);
        if (other == nullptr) continue;
        r.other_price = *other;
        r.other_usd_per_gpu_hour = usd_per_gpu_hour(o, *other);
        r.other_freshness = price_freshness(other, q.now_date, out.limits);
        break;
      }
    }
    r.usd_per_gpu_hour = offer_sort_value(o, kSortPricePerGpuHour, q.price_kind, ctx.gpus());
    r.bandwidth_bytes_per_s = offer_sort_value(o, kSortBandwidth, q.price_kind, ctx.gpus());
    r.gpu_memory_bytes = o.gpu_memory_bytes;
    if (!r.gpu_memory_bytes && o.gpu_name) {
      if (const GpuSpec* spec = ctx.gpus().try_find(*o.gpu_name)) {
        r.gpu_memory_bytes = spec->memory_bytes;
        r.gpu_memory_from_datasheet = true;
      }
    }
    r.billing = ctx.billing(o);
    r.stale = is_stale(o, q.price_kind, q.now_date, q.stale_after_days);
    r.freshness = price_freshness(r.price ? &*r.price : nullptr, q.now_date, out.limits);
    r.evidence = price_evidence_tier(o, q.price_kind, q.now_date, q.stale_after_days);
    r.offer = o;
    out.rows.push_back(std::move(r));
  }
  return out;
}

json to_json(const OffersOutput& out) {
  json arr = json::array();
  if (out.group_key) {
    const std::string_view key_name = *out.group_key == OfferGroupKey::gpu ? "gpu" : "provider";
    for (const auto& g : out.groups) {
      arr.push_back({{std::string(key_name), g.key},
                     {"offers", g.offers},
                     {"priced_offers", g.priced_offers},
                     {"flagged_offers", g.flagged_offers},
                     {key_name == "gpu" ? "providers" : "gpus", g.providers},
                     {"dated_offers", g.dated_offers},
                     {"min_usd_per_gpu_hour", opt(g.min_usd_per_gpu_hour)},
                     {"median_usd_per_gpu_hour", opt(g.median_usd_per_gpu_hour)},
                     {"max_usd_per_gpu_hour", opt(g.max_usd_per_gpu_hour)},
                     {"newest_observed_at", opt(g.newest_observed_at)},
                     {"newest_last_seen_at", opt(g.newest_last_seen_at)}});
    }
    return arr;
  }
  const std::string kind(price_kind_name(out.query.price_kind));
  for (const auto& r : out.rows) {
    const Offer& o = r.offer;
    json flags = json::array();
    for (const auto& f : o.flags) flags.push_back({{"rule", f.rule}, {"detail", f.detail}, {"excludes", f.excludes}});
    arr.push_back({
        {"id", o.id},
        {"provider", o.provider},
        {"instance_type", o.instance_type},
        {"region", o.region},
        {"gpu_name", opt(o.gpu_name)},
        {"gpu_name_raw", o.gpu_name_raw},
        {"gpu_count", o.gpu_count},
        {"gpu_memory_bytes", opt(r.gpu_memory_bytes)},
        {"gpu_memory_source", r.gpu_memory_bytes ? json(r.gpu_memory_from_datasheet ? "datasheet" : "offer") : json(nullptr)},
        {"memory_bandwidth_bytes_per_s", opt(r.bandwidth_bytes_per_s)},
        {"intra_node_link", intra_node_link_name(o.intra_node_link)},
        {"inter_node_network", inter_node_network_name(o.inter_node_network)},
        {"inter_node_bits_per_s", opt(o.inter_node_bits_per_s)},
        {"max_nodes", opt(o.max_nodes)},
        {"min_nodes", opt(o.min_nodes)},
        {"price_kind", kind},
        {"usd_per_hour", r.price ? json(r.price->usd_per_hour) : json(nullptr)},
        {"usd_per_gpu_hour", opt(r.usd_per_gpu_hour)},
        {"billing_granularity_seconds", opt(r.billing.granularity_seconds)},
        {"billing_minimum_billed_seconds", opt(r.billing.minimum_billed_seconds)},
        // Expected spot preemptions per instance-day (AWS Spot Advisor band, trial9d D4: shown
        // only by plan --json before) and where each known billing term comes from.
        {"preemptions_per_day", opt(r.billing.preemptions_per_day)},
        {"billing_sources", r.billing.sources},
        {"source", r.price ? json(r.price->source.dataset) : json(nullptr)},
        {"locator", r.price ? json(r.price->source.locator) : json(nullptr)},
        {"observed_at", r.price ? opt(r.price->source.observed_at) : json(nullptr)},
        {"last_seen_at", r.price ? opt(r.price->seen_at()) : json(nullptr)},
        {"stale", opt(r.stale)},
        {"age_days", opt(r.freshness.age_days)},
        {"freshness", freshness_tier_name(r.freshness.tier)},
        {"evidence", evidence_tier_name(r.evidence)},
        {"confirmed_available_at", opt(o.confirmed_available_at)},
        {"flags", flags},
        {"other_price", r.other_price ? json{{"price_kind", price_kind_name(r.other_price->kind)},
                                             {"usd_per_hour", r.other_price->usd_per_hour},
                                             {"usd_per_gpu_hour", opt(r.other_usd_per_gpu_hour)},
                                             {"source", r.other_price->source.dataset},
                                             {"locator", r.other_price->source.locator},
                                             {"observed_at", opt(r.other_price->source.observed_at)},
                                             {"last_seen_at", opt(r.other_price->seen_at())},
                                             {"age_days", opt(r.other_freshness.age_days)},
                                             {"freshness", freshness_tier_name(r.other_freshness.tier)}}
                                      : json(nullptr)},
    });
  }
  return arr;
}

// ---- history ------------------------------------------------------------------------------

std::span<const FieldDef<HistoryInput>> history_fields() {
  static const std::vector<FieldDef<HistoryInput>> f = {
      {{"offer_id", "", FieldType::string, FieldFace::both, "offer id, as listed by offers (provider/instance_type/region)"},
       [](HistoryInput& in, const json& v) { in.offer_id = v.get<std::string>(); }},
  };
  return f;
}

Offer run_history(const HistoryInput& in, const Context& ctx) {
  if (in.offer_id.find_first_not_of(" \t") == std::string::npos)
    throw_invalid_coded("offer_id", "value_empty", {{"a_field", "offer_id"}}, "an empty offer id",
                        "an id as listed by `gpuplan offers` (provider/instance_type/region)");
  // trial50 #16: an id with control bytes was echoed raw into the terminal (an ESC sequence
  // coloured it), and a 100,000-character id came back whole in the error.
  if (const auto pr = find_text_problem(in.offer_id, /*allow_newlines=*/false))
    throw_invalid_coded("offer_id", "text_not_clean", {{"position", fmt::format("1:{}", pr->offset + 1)}},
                        fmt::format("{} in the offer id at character {}", pr->what, pr->offset + 1),
                        "UTF-8 text without control characters");
  constexpr std::size_t kMaxOfferIdChars = 512;  // provider/instance_type/region: far below it
  if (in.offer_id.size() > kMaxOfferIdChars) {
    std::size_t cut = 48;  // on a character boundary (the id is UTF-8: checked above)
    while (cut > 0 && (static_cast<unsigned char>(in.offer_id[cut]) & 0xC0) == 0x80) --cut;
    throw_not_found_coded("offer_id", "unknown_offer", {{"id", in.offer_id.substr(0, cut) + "…"}},
                          fmt::format("no offer id is {} bytes long", in.offer_id.size()),
                          "an id as listed by `gpuplan offers` (provider/instance_type/region)");
  }
  std::optional<Offer> offer;
  {
    const auto lock = ctx.use_store();
    offer = ctx.store().get(in.offer_id);
    if (!offer) {
      // Ids are stored in lower case (catalog/import_common.cpp id_part) but for the "%2F" escape
      // of a slash: "MYCLOUD/H100X8/US-EAST" names the offer imported as MyCloud (trial46). Tried
      // as typed first, then so.
      std::string folded = in.offer_id;
      for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (auto at = folded.find("%2f"); at != std::string::npos; at = folded.find("%2f", at + 3)) folded[at + 2] = 'F';
      if (folded != in.offer_id) offer = ctx.store().get(folded);
    }
  }
  if (!offer)
    throw_not_found_coded(in.offer_id, "unknown_offer", {{"id", in.offer_id}}, "no offer with this id in the store",
                          "an id as listed by `gpuplan offers` (provider/instance_type/region)");
  return std::move(*offer);
}

json history_to_json(const Offer& offer) {
  json arr = json::array();
  for (const auto& p : offer.prices) {
    auto g = usd_per_gpu_hour(offer, p);
    arr.push_back({{"observed_at", opt(p.source.observed_at)},
                   {"last_seen_at", opt(p.last_seen_at)},
                   {"kind", price_kind_name(p.kind)},
                   {"usd_per_hour", p.usd_per_hour},
                   {"usd_per_gpu_hour", opt(g)},
                   {"dataset", p.source.dataset},
                   {"locator", p.source.locator}});
  }
  return json{{"offer_id", offer.id}, {"gpu_count", offer.gpu_count}, {"observations", arr}};
}

}  // namespace gpuplan::api
