#pragma once
/// Adds a request's flags to a CLI subcommand from its api field table (api/fields.hpp), so the
/// CLI and the JSON API read the same fields with the same setters. A field without a flag is
/// the positional argument (its words joined by spaces: `gpuplan offers gpu=H100 gpus>=8`).
#include <CLI/CLI.hpp>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "api/fields.hpp"

namespace gpuplan::cli {

template <class In>
void add_api_flags(CLI::App& sub, std::shared_ptr<In> in, std::span<const api::FieldDef<In>> table) {
  for (const auto& def : table) {
    const api::FieldDef<In>* d = &def;  // tables are static: the pointer outlives the parse
    const std::string help(d->info.help);
    const std::size_t before = sub.get_options().size();
    if (d->info.flag.empty()) {
      sub.add_option_function<std::vector<std::string>>(
          std::string(d->info.name),
          [in, d](const std::vector<std::string>& words) {
            std::string text;
            for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
            d->set(*in, nlohmann::json(text));
            api::note_given(*in, d->info.name);
          },
          help);
    } else if (d->info.type == api::FieldType::boolean) {
      sub.add_flag_callback(
          std::string(d->info.flag),
          [in, d] {
            d->set(*in, nlohmann::json(true));
            api::note_given(*in, d->info.name);
          },
          help);
    } else {
      sub.add_option_function<std::string>(
             std::string(d->info.flag),
             [in, d](const std::string& text) {
               const std::string where(d->info.flag);
               const nlohmann::json v = api::detail::parse_field_text_ranged(*d, text, where);
               try {
                 d->set(*in, v);
               } catch (const Error& e) {
                 if (!e.where().empty()) throw;
                 rethrow_at(e, where);
               }
               api::note_given(*in, d->info.name);
             },
             help)
          ->type_name(d->info.type == api::FieldType::string     ? "TEXT"
                     : d->info.type == api::FieldType::duration ? "DURATION"
                                                                : "VALUE");
    }
    // An alias is read but not listed: `gpuplan plan --help` showed --stale-days beside
    // --max-price-age, one setting twice (an empty group hides an option in CLI11's help).
    if (!d->info.alias_of.empty() && sub.get_options().size() > before) sub.get_options().back()->group("");
  }
  // An alias and the name it stands for given together (`--stale-days 3 --max-price-age 10d`):
  // the later one silently won; now CLI11 refuses the pair (cli/command.cpp words the error).
  for (const auto& def : table) {
    if (def.info.alias_of.empty() || def.info.flag.empty()) continue;
    for (const auto& other : table) {
      if (other.info.name != def.info.alias_of || other.info.flag.empty()) continue;
      CLI::Option* alias = sub.get_option_no_throw(std::string(def.info.flag));
      CLI::Option* main = sub.get_option_no_throw(std::string(other.info.flag));
      // One-sided (CLI11 checks the excludes of each option given, so the pair is still refused
      // in either order): the listed option's help would otherwise end in "Excludes:" naming the
      // hidden alias as an empty name (trial 9: `plan --help` showed "--max-price-age TEXT Excludes:").
      if (alias != nullptr && main != nullptr) {
        alias->excludes(main);
        main->remove_excludes(alias);
      }
    }
  }
}

}  // namespace gpuplan::cli
