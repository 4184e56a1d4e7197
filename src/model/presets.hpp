#pragma once
/// Bundled model presets: the real Hugging Face configs under data/models/ (compiled in, see
/// util/embedded.hpp), each with its provenance (data/models/PROVENANCE.md).
#include <string>
#include <string_view>
#include <vector>

#include "model/model_arch.hpp"

namespace gpuplan {

struct PresetInfo {
  std::string short_name;        ///< lower-case from the HF name: "llama-3.1-8b", "qwen3-30b-a3b", "sdxl-unet"
  std::string hf_id;             ///< "meta-llama/Llama-3.1-8B"
  std::string folder;            ///< folder under data/models/: "meta-llama__Llama-3.1-8B"
  std::string provenance_class;  ///< A / B / C / "B+C" as in data/models/PROVENANCE.md
  std::vector<std::string> aliases;  ///< other accepted names ("mixtral-8x7b-v0.1", "llama-2-7b-hf")
  /// The model's Hugging Face page: "https://huggingface.co/meta-llama/Llama-3.1-8B" (a diffusion
  /// component: its pipeline's repo).
  std::string hf_url;
  /// Where the bundled config.json was copied from, with its revision, as PROVENANCE.md's row
  /// records it: a GitHub file at its commit ("https://github.com/ai-dynamo/aiconfigurator/blob/
  /// 095f58a…/aic-core/…/meta-llama--Meta-Llama-3.1-8B_config.json") or a Hugging Face page with
  /// its revision ("https://huggingface.co/…/config.json (revision 367d8cb)"); "" if no row.
  std::string config_copied_from;
  /// config_copied_from's parts: the address alone (a link) and the revision shown beside it
  /// ("367d8cb"; "" when the address pins it already or none is recorded).
  std::string config_url;
  std::string config_revision;
};

/// All presets, in a stable order (by family then size as listed in presets.cpp).
const std::vector<PresetInfo>& list_presets();

/// Loads a preset by short name (case-insensitive; the HF id "org/Name" and the folder name are
/// accepted too). ModelArch::name = short name, source = "preset <short>: <hf_id> (<hf_url>);
/// config.json copied from <config_copied_from>, provenance class X": addresses a reader can open,
/// no repository path (trial of issue 10, D2).
/// A name of 2+ words that begins several presets' names ("mistral-7b", not a bare "llama") → Error{invalid_input, "--model"}
/// code ambiguous_model, values.candidates = those presets (never resolved silently).
/// Unknown name → Error{not_found, "--model"} code unknown_model whose values.near lists the
/// closest names, the closest first (family, then version, then size; presets.cpp closeness()),
/// or unknown_model_no_near when none is close.
ModelArch load_preset(std::string_view short_name);

/// The presets whose names (short name or an alias, compared word by word: "Mistral 7B" and
/// "mistral-7b" are the words mistral, 7b) begin with `name`'s words, when `name` has two or more
/// words and begins two or more presets ("mistral 7b": mistral-7b-v0.1, mistral-7b-instruct-v0.3);
/// empty otherwise. The rule load_preset refuses as ambiguous_model.
std::vector<std::string> presets_begun_by(std::string_view name);

/// The preset whose short name / HF id / folder equals `name` (case-insensitive), or nullptr.
const PresetInfo* find_preset(std::string_view name);

}  // namespace gpuplan
