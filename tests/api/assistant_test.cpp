// The assistant's grammar on a table of sentences in English, French and Thai. Each row lists
// every field the sentence states (and nothing else: a field not in the row must not be read)
// and what is missing. Expected values are the sentence's own numbers written out by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "api/assistant.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan::api {
namespace {

using nlohmann::json;

struct Row {
  const char* sentence;
  const char* language;
  json fields;  ///< name → value, exactly the fields read
  std::vector<std::string> missing;
};

TEST(Assistant, ReadsTheTableOfSentences) {
  const std::vector<Row> rows = {
      {"fine-tune Llama 3.1 70B with QLoRA on 200M tokens within two days under $500", "en",
       {{"model", "llama-3.1-70b"}, {"task", "qlora"}, {"tokens", 2e8}, {"budget_usd", 500}, {"deadline_seconds", 2 * 86400}},
       {}},
      {"LoRA fine-tune of llama-3.1-8b on 1.5B tokens on H100", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1.5e9}, {"filter", "gpu=H100"}}, {}},
      {"serve Qwen3 8B at 20 requests per second for 48 hours", "en",
       {{"model", "qwen3-8b"}, {"task", "serve"}, {"rps", 20}, {"hours", 48}}, {}},
      {"pretrain a model on 2T tokens", "en", {{"task", "pretrain"}, {"tokens", 2e12}}, {"model"}},
      {"fine-tune mistral 7b v0.1", "en", {{"model", "mistral-7b-v0.1"}, {"task", "full"}}, {"tokens"}},
      {"affiner Llama 3.1 70B en QLoRA sur 200 millions de jetons en deux jours pour moins de 500 $", "fr",
       {{"model", "llama-3.1-70b"}, {"task", "qlora"}, {"tokens", 2e8}, {"budget_usd", 500}, {"deadline_seconds", 2 * 86400}},
       {}},
      {"servir Llama 3.1 8B pour 50 utilisateurs", "fr", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 50}}, {}},
      {"affiner qwen3-8b sur 1,5 milliard de jetons avec des A100", "fr",
       {{"model", "qwen3-8b"}, {"task", "full"}, {"tokens", 1.5e9}, {"filter", "gpu=A100"}}, {}},
      {"ไฟน์จูน Llama 3.1 70B ด้วย QLoRA บน 200 ล้านโทเคน ภายใน 2 วัน งบไม่เกิน 500 ดอลลาร์", "th",
       {{"model", "llama-3.1-70b"}, {"task", "qlora"}, {"tokens", 2e8}, {"budget_usd", 500}, {"deadline_seconds", 2 * 86400}},
       {}},
      {"ให้บริการ Llama 3.1 8B 10 คำขอต่อวินาที", "th", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 10}}, {}},
      {"ปรับแต่งโมเดล", "th", {{"task", "full"}}, {"model", "tokens"}},
      {"hello there", "en", json::object(), {"model", "task"}},
      // Trial misses (issue 10 leftovers): a TPOT latency, money in € or with "budget", a negated
      // QLoRA, a model given by its size, marks on numbers (their values here; marks below).
      {"serve llama 3.1 8b at 10 requests per second with 50 ms per token", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 10}, {"tpot_ms", 50}}, {}},
      {"serve llama 3.1 8b for 20 users, time to first token 500 ms", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 20}, {"ttft_ms", 500}}, {}},
      {"fine-tune llama 3.1 8b with LoRA, not QLoRA, on 200M tokens", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e8}}, {}},
      {"fine-tune llama 3.1 70b, not qlora, on 200M tokens", "en", {{"model", "llama-3.1-70b"}, {"task", "full"}, {"tokens", 2e8}}, {}},
      {"pretrain a 7B model on 100B tokens", "en", {{"task", "pretrain"}, {"params", 7e9}, {"tokens", 1e11}}, {}},
      {"fine-tune llama 3.1 8b with lora on at least 200M tokens for about 500€", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e8}, {"budget_eur", 500}}, {}},
      {"lora on llama 3.1 8b, ~300M tokens, budget 500", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 3e8}, {"budget_usd", 500}}, {}},
      {"servir Llama 3.1 8B pour 50 utilisateurs avec 50 ms par jeton", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 50}, {"tpot_ms", 50}}, {}},
      {"affiner Llama 3.1 8B en LoRA, pas en QLoRA, sur au moins 200 millions de jetons, budget 500 €", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e8}, {"budget_eur", 500}}, {}},
      {"pr\u00e9-entra\u00eener un mod\u00e8le de 7B sur 100 milliards de jetons", "fr",
       {{"task", "pretrain"}, {"params", 7e9}, {"tokens", 1e11}}, {}},
      {"affiner llama 3.1 8b sur environ 300 millions de jetons avec un budget de 500", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "full"}, {"tokens", 3e8}, {"budget_usd", 500}}, {}},
      {"ให้บริการ Llama 3.1 8B 10 คำขอต่อวินาที 50 มิลลิวินาทีต่อโทเคน", "th",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 10}, {"tpot_ms", 50}}, {}},
      {"ไฟน์จูน Llama 3.1 8B ด้วย LoRA ไม่ใช่ QLoRA บน 200 ล้านโทเคน", "th",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e8}}, {}},
      {"พรีเทรนโมเดล 7B บน 100 พันล้านโทเคน", "th", {{"task", "pretrain"}, {"params", 7e9}, {"tokens", 1e11}}, {}},
      {"ไฟน์จูน Llama 3.1 8B ด้วย LoRA บนอย่างน้อย 200 ล้านโทเคน งบ 500", "th",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e8}, {"budget_usd", 500}}, {}},
      {"ให้บริการ Llama 3.1 8B ประมาณ 20 ผู้ใช้ งบ 5000 บาท", "th",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 20}, {"budget_thb", 5000}}, {}},
      // Trial 8 (#3): "using 4 H100s" and "seq 8192" were dropped without a word. A count before a
      // GPU name (plural too) is the total GPU count, before "nodes" the node count; the sequence
      // length in its usual phrasings, "8k" as 8 × 1,024 = 8,192 (context sizes are powers of two).
      {"fine-tune llama 3.1 8b with lora on 1e8 tokens using 4 H100s, seq 8192", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"gpus", 4}, {"filter", "gpu=H100"}, {"seq", 8192}}, {}},
      {"lora on llama 3.1 8b, 1e8 tokens, 8x A100 with a sequence length of 4096 tokens", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"gpus", 8}, {"filter", "gpu=A100"}, {"seq", 4096}}, {}},
      {"pretrain a 7B model on 100B tokens on 2 H100 nodes", "en",
       {{"task", "pretrain"}, {"params", 7e9}, {"tokens", 1e11}, {"nodes", 2}, {"filter", "gpu=H100"}}, {}},
      {"affiner llama 3.1 8b en lora sur 1e8 jetons avec 8 A100, contexte 8k", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"gpus", 8}, {"filter", "gpu=A100"}, {"seq", 8192}}, {}},
      // Trial 9: "for a month" was not read (and the answer then said no serving time was given);
      // a month is 30 days (720 h, `--hours`' default), "a"/"an" is one.
      {"serve llama 3.1 8b to 20 users for a month", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 20}, {"hours", 720}}, {}},
      {"fine-tune llama 3.1 8b with lora on 1e8 tokens within a week", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"deadline_seconds", 7 * 86400}}, {}},
      {"servir Llama 3.1 8B pour 50 utilisateurs pendant deux mois", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 50}, {"hours", 2 * 720}}, {}},
      {"ให้บริการ Llama 3.1 8B 10 คำขอต่อวินาที 1 เดือน", "th",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 10}, {"hours", 720}}, {}},
      // Trial 9: the served weights' format ("in int4") was dropped without a word.
      {"serve llama 3.1 70b to 100 users in int4", "en",
       {{"model", "llama-3.1-70b"}, {"task", "serve"}, {"concurrency", 100}, {"quant", "int4"}}, {}},
      {"serve llama 3.1 8b at 10 requests per second with 8-bit weights", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 10}, {"quant", "int8"}}, {}},
      {"servir Llama 3.1 8B pour 50 utilisateurs en fp8", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 50}, {"quant", "fp8"}}, {}},
      {"ให้บริการ Llama 3.1 8B 10 คำขอต่อวินาที แบบ awq", "th",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 10}, {"quant", "awq"}}, {}},
      {"ไฟน์จูน llama 3.1 8b ด้วย lora บน 1e8 โทเคน ใช้ 4 H100 ความยาว 4096", "th",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"gpus", 4}, {"filter", "gpu=H100"}, {"seq", 4096}}, {}},
      // Trial 9: deadlines without a number ("by tomorrow" was dropped without a word): tomorrow
      // 1 day, overnight 12 h, next week 7 days (docs/api.md "Assistant"); "train" / "entraîner"
      // / "เทรน" without a task word: a named model is fine-tuned in full, a size is pretrained;
      // "1e8 training tokens" is the token budget.
      {"fine-tune llama 3.1 8b with lora on 1e8 tokens by tomorrow", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"deadline_seconds", 86400}}, {}},
      {"qlora llama 3.1 70b on 1e8 tokens overnight", "en",
       {{"model", "llama-3.1-70b"}, {"task", "qlora"}, {"tokens", 1e8}, {"deadline_seconds", 12 * 3600}}, {}},
      {"train a 1B model on 2e10 tokens by next week", "en",
       {{"task", "pretrain"}, {"params", 1e9}, {"tokens", 2e10}, {"deadline_seconds", 7 * 86400}}, {}},
      {"affiner llama 3.1 8b avec lora sur 1e8 jetons d'ici demain", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"deadline_seconds", 86400}}, {}},
      {"entraîner llama 3.1 8b sur 1e9 jetons", "fr", {{"model", "llama-3.1-8b"}, {"task", "full"}, {"tokens", 1e9}}, {}},
      {"เทรน llama 3.1 8b 1e8 โทเคน ภายในพรุ่งนี้", "th",
       {{"model", "llama-3.1-8b"}, {"task", "full"}, {"tokens", 1e8}, {"deadline_seconds", 86400}}, {}},
      {"fine-tune llama 3.1 8b with lora on 1e8 training tokens", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}}, {}},
      {"train a model", "en", json::object(), {"model", "task"}},  // nothing says which training: asked
      // Trial (issue 10 ask D3): a power of ten is read whole, 10^30 = 1e30 (the planner then
      // refuses it as out of range), never as its exponent "30 tokens".
      {"fine-tune Llama 3.1 8B with LoRA on 10^30 tokens", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e30}}, {}},
      {"fine-tune Llama 3.1 8B with LoRA on 10**30 tokens", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e30}}, {}},
      {"fine-tune Llama 3.1 8B with LoRA on 2^10 tokens", "en",  // 2^10 = 1,024
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1024}}, {}},
      // D4: French digit groups after a space, U+00A0 or U+202F are one number: 1 000 $ = $1,000,
      // 200 000 000 jetons = 2e8; English "1,000" stays one thousand.
      {"affiner llama 3.1 8b en LoRA sur 2 milliards de jetons avec moins de 1 000 $", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e9}, {"budget_usd", 1000}}, {}},
      {"affiner llama 3.1 8b en LoRA sur 200 000 000 jetons", "fr", {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e8}}, {}},
      {"affiner llama 3.1 8b en LoRA sur 200\u00a0000\u00a0000 jetons avec moins de 1\u00a0000\u00a0$", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e8}, {"budget_usd", 1000}}, {}},
      {"affiner llama 3.1 8b en LoRA sur 200\u202f000\u202f000 jetons avec moins de 1\u202f000\u202f$", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e8}, {"budget_usd", 1000}}, {}},
      {"fine-tune llama 3.1 8b with lora on 200,000,000 tokens under $1,000", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 2e8}, {"budget_usd", 1000}}, {}},
      // trial46 D1: the digits ending a format's name (int4, fp8, w8a8) are not a user count; the
      // count after the noun ("users: 100", "utilisateurs : 100", Thai "ผู้ใช้ 100 คน") is.
      {"serve llama 3.1 70b int4 for users: 100", "en",
       {{"model", "llama-3.1-70b"}, {"task", "serve"}, {"quant", "int4"}, {"concurrency", 100}}, {}},
      {"serve qwen3 8b fp8 users 50", "en", {{"model", "qwen3-8b"}, {"task", "serve"}, {"quant", "fp8"}, {"concurrency", 50}}, {}},
      {"serve llama 3.1 8b w8a8 users 10", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"quant", "w8a8"}, {"concurrency", 10}}, {}},
      {"servir llama 3.1 70b int4 utilisateurs : 100", "fr",
       {{"model", "llama-3.1-70b"}, {"task", "serve"}, {"quant", "int4"}, {"concurrency", 100}}, {}},
      {"ให้บริการ llama 3.1 70b int4 ผู้ใช้ 100 คน", "th",
       {{"model", "llama-3.1-70b"}, {"task", "serve"}, {"quant", "int4"}, {"concurrency", 100}}, {}},
      // trial47 D1, D2, D4: a number after "users" that belongs to something else (2 weeks, 2x8
      // H100, 1 000 written with a space) is not a user count (asked for); Thai ผู้ใช้: 100 and
      // "2 โหนด โหนดละ 8 H100" (2 nodes, 8 each) are read.
      {"serve llama 3.1 8b for our users 2 weeks", "en", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"hours", 336}}, {"rps"}},
      {"serve llama 3.1 8b for users: 2x8 H100", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"nodes", 2}, {"gpus", 16}, {"filter", "gpu=H100"}}, {"rps"}},
      {"servir llama 3.1 8b pour nos utilisateurs 2 semaines", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"hours", 336}}, {"rps"}},
      // "200 tokens output" is each request's output length (trial50 #14; it was read as 200 training tokens).
      {"serve llama 3.1 8b for users: 100, 200 tokens output", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"output_tokens", 200}}, {}},
      {"serve llama 3.1 8b to 10 users with 4k input tokens and 1k output tokens each", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 10}, {"prompt_tokens", 4096}, {"output_tokens", 1024}}, {}},
      {"serve llama 3.1 8b for 20 users, prompts of 8000 tokens, outputs of 500 tokens", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 20}, {"prompt_tokens", 8000}, {"output_tokens", 500}}, {}},
      {"servir llama 3.1 8b à 10 utilisateurs, prompts de 8000 jetons et 500 jetons de sortie", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 10}, {"prompt_tokens", 8000}, {"output_tokens", 500}}, {}},
      {"ให้บริการ llama 3.1 8b ผู้ใช้: 100", "th", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}}, {}},
      {"ให้บริการ llama 3.1 8b บน 2 โหนด โหนดละ 8 H100 สำหรับผู้ใช้ 100 คน", "th",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"nodes", 2}, {"gpus", 16}, {"filter", "gpu=H100"}, {"concurrency", 100}}, {}},
      // trial46 D6: a per-user speed is a TPOT target: 30 tokens/s per user = 1000/30 ms per token.
      {"serve llama 3.1 8b to 100 users at 30 tokens per second per user", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"tpot_ms", 1000.0 / 30.0}}, {}},
      {"servir llama 3.1 8b pour 100 utilisateurs à 25 jetons par seconde par utilisateur", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"tpot_ms", 1000.0 / 25.0}}, {}},
      // trial47: hours per day are a duty cycle, not a duration: 3 weeks × 24/24 = 504 h; 5 days × 8 h
      // = 40 h; without a duration the service time is not read (the default applies).
      {"serve llama 3.1 8b for 100 users 24 hours a day for 3 weeks", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"hours", 3 * 7 * 24}}, {}},
      {"serve llama 3.1 8b for 100 users 8 hours a day for 5 days", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"hours", 5 * 8}}, {}},
      {"servir llama 3.1 8b pour 100 utilisateurs 8 heures par jour pendant 5 jours", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"hours", 5 * 8}}, {}},
      {"ให้บริการ llama 3.1 8b สำหรับผู้ใช้ 100 คน วันละ 8 ชั่วโมง เป็นเวลา 5 วัน", "th",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"hours", 5 * 8}}, {}},
      // trial49: days per week are a duty cycle too: 4 weeks × 168 h × 8/24 × 5/7 = 160 h.
      {"serve llama 3.1 8b for 100 users 8 hours a day 5 days a week for 4 weeks", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"hours", 4 * 168.0 * 8 / 24 * 5 / 7}}, {}},
      {"serve llama 3.1 8b to 100 users at 30 tokens/s each", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"tpot_ms", 1000.0 / 30.0}}, {}},
      {"servir llama 3.1 8b pour 100 utilisateurs à 25 jetons par seconde chacun", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"tpot_ms", 1000.0 / 25.0}}, {}},
      // trial48 #6: a training stack named in the sentence is the plan's stack.
      {"pretrain qwen3 30b a3b on 100B tokens with megatron", "en",
       {{"model", "qwen3-30b-a3b"}, {"task", "pretrain"}, {"tokens", 1e11}, {"stack", "megatron"}}, {}},
      {"affiner llama 3.1 8b en lora sur 1e8 jetons avec deepspeed", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"stack", "deepspeed"}}, {}},
      // trial49: "each" before the speed; Thai คนละ (each person): 1000/30 ms per token.
      {"serve llama 3.1 8b to 100 users, each at 30 tokens/s", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"tpot_ms", 1000.0 / 30.0}}, {}},
      {"ให้บริการ llama 3.1 8b สำหรับผู้ใช้ 100 คน คนละ 30 โทเค็นต่อวินาที", "th",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 100}, {"tpot_ms", 1000.0 / 30.0}}, {}},
      // trial46 D7: N nodes of M GPUs is N nodes and N × M GPUs: 2 × 8 = 16.
      {"fine-tune llama 3.1 70b with qlora on 200M tokens using 2 nodes of 8 H100", "en",
       {{"model", "llama-3.1-70b"}, {"task", "qlora"}, {"tokens", 2e8}, {"nodes", 2}, {"gpus", 16}, {"filter", "gpu=H100"}}, {}},
      {"pretrain a 1B model on 1e10 tokens on 2x8 H100s", "en",
       {{"task", "pretrain"}, {"params", 1e9}, {"tokens", 1e10}, {"nodes", 2}, {"gpus", 16}, {"filter", "gpu=H100"}}, {}},
      {"affiner llama 3.1 8b en lora sur 1e8 jetons avec 4 nœuds de 8 A100", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"nodes", 4}, {"gpus", 32}, {"filter", "gpu=A100"}}, {}},
      // trial52 #1: a count after "at most" / "up to" / "au plus" / "ไม่เกิน" is a ceiling (max_nodes,
      // max_gpus), not the exact cluster; "spot" is read (no_spot false: spot planned), "no spot"
      // / "sans spot" too (no_spot true).
      {"fine-tune llama 3.1 8b with lora on 100M tokens using deepspeed on spot instances, at most 2 nodes", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"stack", "deepspeed"}, {"no_spot", false},
        {"max_nodes", 2}},
       {}},
      {"full fine-tune qwen2.5-14b on 1B tokens, up to 8 GPUs, no spot", "en",
       {{"model", "qwen2.5-14b"}, {"task", "full"}, {"tokens", 1e9}, {"max_gpus", 8}, {"no_spot", true}}, {}},
      {"affiner llama 3.1 8b en lora sur 1e8 jetons, au plus 8 GPU, sans spot", "fr",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"max_gpus", 8}, {"no_spot", true}}, {}},
      // trial53: "max 4 GPUs" is a ceiling; "fewer than 8 GPUs" at most 7; "at least 8 GPUs" is no
      // setting (read, not used: no gpus field sent).
      {"fine-tune llama 3.1 8b with lora on 1e8 tokens, max 4 GPUs", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"max_gpus", 4}}, {}},
      {"fine-tune llama 3.1 8b with lora on 1e8 tokens with fewer than 8 GPUs", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"max_gpus", 7}}, {}},
      {"fine-tune llama 3.1 8b with lora on 1e8 tokens on at most 2 nodes of 8 H100", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"max_nodes", 2}, {"max_gpus", 16}, {"filter", "gpu=H100"}},
       {}},
      // trial56 #3: a TTFT written unit first ("under 1s time to first token") was not read; a
      // load with no task word ("for 10 users") is serving; examples of a length are their
      // product (20,000 × 512 = 10,240,000; 5,000 × 800 = 4,000,000), not the length alone.
      {"serve qwen2.5 7b instruct to 50 users with under 1s time to first token", "en",
       {{"model", "qwen2.5-7b-instruct"}, {"task", "serve"}, {"concurrency", 50}, {"ttft_ms", 1000}}, {}},
      {"serve llama 3.1 8b to 20 users, 500 ms ttft and 50 ms per token", "en",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 20}, {"ttft_ms", 500}, {"tpot_ms", 50}}, {}},
      {"run llama 3.1 70b in 4-bit for 10 users", "en",
       {{"model", "llama-3.1-70b"}, {"task", "serve"}, {"concurrency", 10}, {"quant", "int4"}}, {}},
      {"llama 3.1 8b at 5 requests per second", "en", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 5}}, {}},
      {"LoRA qwen2.5 7b instruct on 20k examples of 512 tokens", "en",
       {{"model", "qwen2.5-7b-instruct"}, {"task", "lora"}, {"tokens", 10240000}}, {}},
      {"fine-tune llama 3.1 8b on 5000 conversations of ~800 tokens each", "en",
       {{"model", "llama-3.1-8b"}, {"task", "full"}, {"tokens", 4000000}}, {}},
      // trial57 #6: other phrasings of the same (20,000 × 512 = 10,240,000), a TTFT in Thai
      // seconds (1 วินาที = 1,000 ms), queries, requests per minute (300 / 60 = 5 per second),
      // a user count with "k" (10 × 1,000).
      {"LoRA qwen2.5 7b instruct on 20k examples averaging 512 tokens", "en",
       {{"model", "qwen2.5-7b-instruct"}, {"task", "lora"}, {"tokens", 10240000}}, {}},
      {"LoRA qwen2.5 7b instruct on 20k examples, 512 tokens each", "en",
       {{"model", "qwen2.5-7b-instruct"}, {"task", "lora"}, {"tokens", 10240000}}, {}},
      {"ให้บริการ Llama 3.1 8B ผู้ใช้ 20 คน ttft ไม่เกิน 1 วินาที", "th",
       {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 20}, {"ttft_ms", 1000}}, {}},
      {"serve llama 3.1 8b at 5 queries per second", "en", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 5}}, {}},
      {"serve llama 3.1 8b at 300 requests per minute", "en", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 5}}, {}},
      {"serve llama 3.1 8b to 10k users", "en", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 10000}}, {}},
  };
  const GpuCatalog& gpus = GpuCatalog::bundled();
  for (const auto& r : rows) {
    const AskResult a = understand(r.sentence, gpus);
    json got = json::object();
    for (const auto& f : a.fields) got[f.name] = f.value;
    EXPECT_EQ(got, r.fields) << r.sentence;
    EXPECT_EQ(a.missing, r.missing) << r.sentence;
    EXPECT_EQ(a.language, r.language) << r.sentence;
    EXPECT_TRUE(a.unread.empty()) << r.sentence << ": " << to_json(a)["unread"].dump();  // every number was read
  }
}

// trial57 #1: a token count beside "N examples of L tokens" was taken as read and dropped without
// a word; the budget is the examples' product and the other count is listed as not read. The
// product of "~800 tokens" keeps its ≈ (trial57 #11).
TEST(Assistant, ATokenCountBesideExamplesIsListedAsUnreadAndApproximationIsKept) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  const AskResult a = understand("fine-tune llama 3.1 8b with lora on 20k examples of 512 tokens and 1B tokens", gpus);
  json got = json::object();
  for (const auto& f : a.fields) got[f.name] = f.value;
  EXPECT_EQ(got["tokens"], 10240000);
  EXPECT_FALSE(a.unread.empty()) << to_json(a).dump();
  EXPECT_NE(to_json(a)["unread"].dump().find("1b tokens"), std::string::npos) << to_json(a)["unread"].dump();
  const AskResult b = understand("fine-tune llama 3.1 8b on 5000 conversations of ~800 tokens each", gpus);
  for (const auto& f : b.fields) {
    if (f.name == "tokens") {
      EXPECT_EQ(f.mark, "\xe2\x89\x88");
    }
  }
}

// What the grammar does not read is said (issue 10: "what it cannot parse it says so"): each
// number no field took, with the words around it; numbers inside names ("h100", "qwen3") are
// not numbers of the sentence.
// trial49: more hours than a day has, more days than a week has, or none, are refused in the
// sentence's words ("0 hours a day" was read as 24 h, "25 hours a day" as 49 h); a duty cycle
// without a duration is listed as unread, not dropped.
TEST(Assistant, DutyCyclesOutsideADayOrAWeekAreRefused) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  for (const char* s : {"serve llama 3.1 8b for 100 users 0 hours a day for 5 days",
                        "serve llama 3.1 8b for 100 users 25 hours a day for 5 days",
                        "serve llama 3.1 8b for 100 users 8 days a week for 4 weeks",
                        "servir llama 3.1 8b pour 100 utilisateurs 30 heures par jour pendant 5 jours"}) {
    try {
      (void)understand(s, gpus);
      ADD_FAILURE() << s << ": not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "question") << s;
      const ErrorCode* c = error_code_of(e);
      ASSERT_NE(c, nullptr) << s;
      EXPECT_EQ(c->code, "question_duty_cycle_out_of_range") << s;
    }
  }
  // A per-user speed of zero allows no time per token: refused, not dropped (trial49).
  try {
    (void)understand("serve llama 3.1 8b to 100 users at 0 tokens/s each", gpus);
    ADD_FAILURE() << "a zero speed was not refused";
  } catch (const Error& e) {
    const ErrorCode* c = error_code_of(e);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->code, "question_value_not_positive");
  }
  const AskResult alone = understand("serve llama 3.1 8b for 100 users 8 hours a day", gpus);
  EXPECT_FALSE(alone.unread.empty());
  for (const auto& f : alone.fields) EXPECT_NE(f.name, "hours");
}

TEST(Assistant, NumbersNoFieldReadAreListedAsUnread) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  AskResult a = understand("fine-tune llama 3.1 8b with lora on 1e8 tokens, batch 64, on h100", gpus);
  EXPECT_EQ(a.unread, std::vector<std::string>{"batch 64"});
  a = understand("fine-tune qwen3-8b with lora on 1e8 tokens, 3 epochs and warmup 100", gpus);
  EXPECT_EQ(a.unread, (std::vector<std::string>{"3 epochs", "warmup 100"}));
  a = understand("lora llama 3.1 8b 1e8 tokens", gpus);
  EXPECT_TRUE(a.unread.empty());
  // Sources are echoed without the trailing space a pattern's \s* took (trial 9: "under $50 ").
  a = understand("lora llama 3.1 8b on 1e8 tokens under $50 within 2 days", gpus);
  for (const auto& f : a.fields) EXPECT_NE(f.source.back(), ' ') << f.name << ": \"" << f.source << "\"";
}

// A number the grammar reads only in part is never used (issue 10 ask D3: "10^30 tokens" was
// planned as 30 tokens): "10^^30 tokens" keeps tokens missing and lists its numbers as not read.
TEST(Assistant, PartlyReadNumbersAreNotUsed) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  const AskResult a = understand("fine-tune llama 3.1 8b with lora on 10^^30 tokens", gpus);
  for (const auto& f : a.fields) EXPECT_NE(f.name, "tokens") << f.source;
  EXPECT_EQ(a.missing, std::vector<std::string>{"tokens"});
  EXPECT_FALSE(a.unread.empty());
}

// trial46 D4: "1,5 million" in English is neither 1,500,000 with a group comma (groups have three
// digits) nor 1.5 (English writes a decimal point): not guessed, so the token count is asked for
// and the words are listed as not read. French "1,5 million" is 1.5 million; "1,500,000" stays
// one number in English; "users 2000 tokens" is not a user count (a unit follows).
TEST(Assistant, ACommaThatIsNeitherGroupNorDecimalIsNotGuessed) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  AskResult a = understand("fine-tune llama 3.1 8b with lora on 1,5 million tokens", gpus);
  for (const auto& f : a.fields) EXPECT_NE(f.name, "tokens") << f.source;
  EXPECT_EQ(a.missing, std::vector<std::string>{"tokens"});
  EXPECT_FALSE(a.unread.empty());
  a = understand("affiner llama 3.1 8b en lora sur 1,5 million de jetons", gpus);
  ASSERT_TRUE(std::any_of(a.fields.begin(), a.fields.end(), [](const auto& f) { return f.name == "tokens"; }));
  for (const auto& f : a.fields) {
    if (f.name == "tokens") {
      EXPECT_EQ(f.value, 1500000);
    }
  }
  a = understand("serve llama 3.1 8b to users 2000 tokens per request", gpus);
  for (const auto& f : a.fields) EXPECT_NE(f.name, "concurrency") << f.source;
  // trial47 D2: "1 000 users" in English is a number read in part: the count is asked for (it was
  // refused as "000 users", zero).
  a = understand("serve llama 3.1 8b for 1 000 users", gpus);
  for (const auto& f : a.fields) EXPECT_NE(f.name, "concurrency") << f.source;
  EXPECT_EQ(a.missing, std::vector<std::string>{"rps"});
  // trial47 D5: two GPU counts are said, the N × M one used.
  a = understand("fine-tune llama 3.1 8b with lora on 1B tokens on 32 H100 as 2 nodes of 8 H100", gpus);
  ASSERT_EQ(a.ambiguous.size(), 1u);
  EXPECT_EQ(a.ambiguous[0].name, "gpus");
  EXPECT_EQ(a.ambiguous[0].readings, (std::vector<std::string>{"2 nodes of 8 h100", "32 h100"}));
}

// small11 #6: "by Friday" and "by end of month" were dropped without a word. They are read as a
// deadline in whole days from today's date (2026-12-03 is a Thursday: 1 January 2026 was a
// Thursday and 3 December is day 337, 336 = 48 weeks later): Friday 24 h; the month's last day,
// 31 December, 28 days. On a Friday, the next one (7 days); on the month's last day or without a
// date the words are listed as unread.
TEST(Assistant, CalendarDeadlinesCountWholeDaysFromToday) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  auto deadline = [&](std::string_view sentence, std::string_view today) -> std::optional<double> {
    return understand(sentence, gpus, today).deadline_seconds;
  };
  EXPECT_EQ(deadline("fine-tune llama 3.1 8b with lora on 1e8 tokens by Friday", "2026-12-03"), 86400.0);
  EXPECT_EQ(deadline("fine-tune llama 3.1 8b with lora on 1e8 tokens by Friday", "2026-12-04"), 7 * 86400.0);
  EXPECT_EQ(deadline("fine-tune llama 3.1 8b with lora on 1e8 tokens by Friday", "2026-11-30"), 4 * 86400.0);  // Monday
  EXPECT_EQ(deadline("fine-tune llama 3.1 8b with lora on 1e8 tokens by end of month", "2026-12-03"), 28 * 86400.0);
  EXPECT_EQ(deadline("affiner llama 3.1 8b avec lora sur 1e8 jetons d'ici vendredi", "2026-12-03"), 86400.0);
  EXPECT_EQ(deadline("affiner llama 3.1 8b avec lora sur 1e8 jetons d'ici la fin du mois", "2026-02-10"), 18 * 86400.0);
  EXPECT_EQ(deadline("ไฟน์จูน llama 3.1 8b ด้วย lora บน 1e8 โทเคน ภายในวันศุกร์", "2026-12-03"), 86400.0);
  EXPECT_EQ(deadline("ไฟน์จูน llama 3.1 8b ด้วย lora บน 1e8 โทเคน ภายในสิ้นเดือน", "2026-12-03"), 28 * 86400.0);
  // The echo names the words; the field is a limit (≤).
  const AskResult a = understand("lora llama 3.1 8b on 1e8 tokens by friday", gpus, "2026-12-03");
  const auto f = std::find_if(a.fields.begin(), a.fields.end(), [](const auto& x) { return x.name == "deadline_seconds"; });
  ASSERT_NE(f, a.fields.end());
  EXPECT_EQ(f->source, "by friday");
  EXPECT_EQ(f->mark, "\xe2\x89\xa4");
  // No date to count from, or the month ends today: said as unread, no deadline invented.
  const AskResult undated = understand("lora llama 3.1 8b on 1e8 tokens by friday", gpus);
  EXPECT_FALSE(undated.deadline_seconds.has_value());
  EXPECT_EQ(undated.unread, std::vector<std::string>{"by friday"});
  const AskResult last_day = understand("lora llama 3.1 8b on 1e8 tokens by end of month", gpus, "2026-12-31");
  EXPECT_FALSE(last_day.deadline_seconds.has_value());
  EXPECT_EQ(last_day.unread, std::vector<std::string>{"by end of month"});
}

// The budget and the deadline go to the planner as its constraints (a trial found `ask` listing
// plans past the deadline under the recommendation): the body reads back through plan_fields().
TEST(Assistant, PlanBodyCarriesBudgetAndDeadlineAsPlanConstraints) {
  const AskResult a = understand("fine-tune Llama 3.1 70B with QLoRA on 200M tokens within two days under $500", GpuCatalog::bundled());
  const json body = a.plan_body();
  EXPECT_FALSE(body.contains("budget_usd"));
  EXPECT_FALSE(body.contains("deadline_seconds"));
  EXPECT_EQ(body["tokens"], 2e8);
  EXPECT_EQ(body["deadline"], "172800s");  // 2 days × 86,400 s
  EXPECT_EQ(body["budget"], 500);
  PlanInput in;
  read_fields(in, body, plan_fields());
  EXPECT_EQ(in.deadline, "172800s");
  ASSERT_TRUE(in.request.budget_usd.has_value());
  EXPECT_EQ(*in.request.budget_usd, 500);
}

TEST(Assistant, FirstPlanWithinBudgetAndDeadline) {
  const AskResult a = understand("fine-tune Llama 3.1 70B with QLoRA on 200M tokens within two days under $500", GpuCatalog::bundled());
  PlanResult res;
  Plan cheap_slow, fast;
  cheap_slow.cost.compute_usd = 100;      // total_usd() = compute + storage + egress + spot loss
  cheap_slow.cost.run_seconds = 3 * 86400;  // time_seconds(): over the 2-day deadline
  fast.cost.compute_usd = 400;            // under the $500 budget
  fast.cost.run_seconds = 86400;
  res.plans = {cheap_slow, fast};
  const auto within = first_plan_within(a, res);
  ASSERT_TRUE(within.has_value());
  EXPECT_EQ(*within, 1u);
}

// A number no double holds is an input error at "question" naming it; "1e999 hours" is not read as
// "999 hours" (the duration reads the exponent like every other number).
TEST(Assistant, OutOfRangeNumbersAreInputErrors) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  for (const char* s : {"lora llama 3.1 8b on 1e999 tokens", "lora llama 3.1 8b on 100M tokens within 1e999 hours",
                        "lora llama 3.1 8b on 1e300 billion tokens", "lora llama 3.1 8b on 100M tokens under $1e999"}) {
    try {
      (void)understand(s, gpus);
      ADD_FAILURE() << "no error for: " << s;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << s;
      EXPECT_EQ(e.where(), "question") << s;
      EXPECT_NE(e.message().find("out of range"), std::string::npos) << e.message();
    }
  }
  // In range, with an exponent: 3 weeks = 3 × 7 × 86,400 s; 2e8 tokens.
  const AskResult a = understand("lora llama 3.1 8b on 2e8 tokens within 3 weeks", gpus);
  json got = json::object();
  for (const auto& f : a.fields) got[f.name] = f.value;
  EXPECT_EQ(got["tokens"], 2e8);
  EXPECT_EQ(got["deadline_seconds"], 3.0 * 7 * 86400);
}

// A minus after the currency sign (issue 11, trial 7: "$-5" was not read, the budget dropped) is
// read, and a budget of zero or less is refused at once in the sentence's own words (issue 10
// trial D7: the planner had refused it as a number the user never typed).
TEST(Assistant, ANegativeBudgetIsRefusedInTheSentencesWords) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fine-tune llama 3.1 8b on 1e8 tokens under $-5", "$-5"},
      {"affiner llama 3.1 8b sur 1e8 jetons pour moins de $-5", "$-5"},
      {"ปรับแต่ง llama 3.1 8b บน 1e8 โทเคน งบไม่เกิน $-5", "$-5"},
      {"affiner llama 3.1 8b sur 1e8 jetons, budget € -5", "€ -5"}};
  for (const auto& [sentence, words] : cases) {
    try {
      (void)understand(sentence, gpus);
      ADD_FAILURE() << "no error for: " << sentence;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << sentence;
      EXPECT_EQ(e.where(), "question") << sentence;
      EXPECT_NE(e.message().find(words), std::string::npos) << sentence << ": " << e.message();
      EXPECT_NE(e.message().find("must be more than zero"), std::string::npos) << e.message();
    }
  }
}

// A name that begins several presets' names and is none of them (issue 10 trial: "mistral 7b"
// named both mistral-7b-v0.1 and mistral-7b-instruct-v0.3, whose configs differ, and the
// assistant then said only "Not read: mistral 7b on"): the model stays missing, the presets are
// listed to choose from, and the words count as read. The bundled models are the two folders
// data/models/mistralai__Mistral-7B-v0.1 and mistralai__Mistral-7B-Instruct-v0.3.
TEST(Assistant, AModelNameOfSeveralPresetsIsAskedNotPicked) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  const std::vector<std::string> mistral = {"mistral-7b-v0.1", "mistral-7b-instruct-v0.3"};
  for (const auto& [sentence, words] : std::vector<std::pair<std::string, std::string>>{
           {"fine-tune mistral 7b on 100M tokens", "mistral 7b"},
           {"affiner Mistral-7B, sur 100M jetons", "mistral-7b"},
           {"ปรับแต่ง mistral 7b บน 100 ล้านโทเคน", "mistral 7b"}}) {
    const AskResult a = understand(sentence, gpus);
    ASSERT_TRUE(a.model_candidates) << sentence;
    EXPECT_EQ(a.model_candidates->words, words) << sentence;
    std::vector<std::string> got = a.model_candidates->presets;
    std::sort(got.begin(), got.end());
    std::vector<std::string> want = mistral;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << sentence;
    EXPECT_NE(std::find(a.missing.begin(), a.missing.end(), "model"), a.missing.end()) << sentence;
    for (const auto& u : a.unread) EXPECT_EQ(u.find("mistral"), std::string::npos) << sentence << ": unread " << u;
    EXPECT_EQ(to_json(a)["model_candidates"]["words"], words);
  }
  // A full name is read as the model, with no candidates.
  const AskResult full = understand("fine-tune mistral 7b v0.1 on 100M tokens", gpus);
  EXPECT_FALSE(full.model_candidates);
  EXPECT_TRUE(full.missing.empty());
  // A bare family ("llama", one word) names no candidates: it stays unread, as load_preset keeps it unknown.
  EXPECT_FALSE(understand("fine-tune llama on 100M tokens", gpus).model_candidates);
}

// Trial 10c: money written in words was dropped without a word (the plan ran without a budget);
// Thai's natural "ผู้ใช้ 100 คน" (users, 100, classifier) and "1 ล้านล้าน" (a million millions) were
// not read; an ambiguous budget was echoed "$500 " with the space after it.
TEST(Assistant, MoneyInWordsIsUnreadThaiUsersAndTrillionsAreReadReadingsAreTrimmed) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  const auto unread_has = [](const AskResult& a, const std::string& words) {
    return std::find(a.unread.begin(), a.unread.end(), words) != a.unread.end();
  };
  AskResult a = understand("fine-tune qwen3 8b with LoRA on 50M tokens, budget: five hundred dollars", gpus);
  EXPECT_FALSE(a.budget_usd);
  EXPECT_TRUE(unread_has(a, "five hundred dollars")) << to_json(a).dump();
  a = understand("affiner qwen3 8b en lora sur 50M jetons, budget cinq cents dollars", gpus);
  EXPECT_FALSE(a.budget_usd);
  EXPECT_TRUE(unread_has(a, "budget cinq cents dollars")) << to_json(a).dump();
  a = understand("ปรับแต่ง llama 3.1 8b ด้วย lora บน 100 ล้านโทเคน งบห้าร้อยดอลลาร์", gpus);
  EXPECT_TRUE(unread_has(a, "งบห้าร้อยดอลลาร์")) << to_json(a).dump();  // not the token count read before it
  // A budget read in digits leaves its currency word read: nothing unread.
  a = understand("fine-tune qwen3 8b with LoRA on 50M tokens for 500 dollars", gpus);
  ASSERT_TRUE(a.budget_usd);
  EXPECT_EQ(*a.budget_usd, 500);
  EXPECT_TRUE(a.unread.empty()) << to_json(a).dump();
  // Thai: the count after the noun, with its classifier; ล้านล้าน = 10^6 × 10^6.
  a = understand("ให้บริการ llama 3.1 8b สำหรับผู้ใช้ 100 คน", gpus);
  json got = json::object();
  for (const auto& f : a.fields) got[f.name] = f.value;
  EXPECT_EQ(got["concurrency"], 100) << got.dump();
  a = understand("ปรับแต่ง llama 3.1 8b ด้วย lora บน 1 ล้านล้านโทเคน", gpus);
  got = json::object();
  for (const auto& f : a.fields) got[f.name] = f.value;
  EXPECT_EQ(got["tokens"], 1e12) << got.dump();
  // "$500 and $300": both readings as words, no space after the first.
  a = understand("fine-tune qwen3 8b with LoRA on 50M tokens under $500 and $300", gpus);
  ASSERT_EQ(a.ambiguous.size(), 1u);
  EXPECT_EQ(a.ambiguous[0].readings, (std::vector<std::string>{"$500", "$300"}));
}

// Trial 10d: a scale word after an amount was dropped ("$1.5M" planned with a $1.50 budget),
// French "billion" (10^12, the long scale; "milliard" is 10^9) was read as 10^9, and token counts
// in words vanished with no "not read".
TEST(Assistant, ScaleWordsOnMoneyFrenchBillionAndTokenWordsAreRead) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  const std::vector<std::pair<std::string, double>> budgets = {
      {"pretrain llama 3.1 8b on 1T tokens, budget $1.5M", 1.5e6},
      {"pretrain llama 3.1 8b on 1T tokens with a budget of 1.5 million dollars", 1.5e6},
      {"pré-entraîner llama 3.1 8b sur 1T jetons, budget 1,5 million de dollars", 1.5e6},
      {"ปรับแต่ง llama 3.1 8b ด้วย lora บน 100 ล้านโทเคน งบ 1.5 ล้านดอลลาร์", 1.5e6},
      {"ปรับแต่ง llama 3.1 8b ด้วย lora บน 100 ล้านโทเคน งบ 2 พันดอลลาร์", 2e3},
      {"fine-tune llama 3.1 8b on 1e8 tokens, budget 2k", 2e3},
      {"fine-tune llama 3.1 8b on 1e8 tokens under $500 by friday", 500},  // "b" of "by" is no scale
  };
  for (const auto& [sentence, usd] : budgets) {
    const AskResult a = understand(sentence, gpus);
    ASSERT_TRUE(a.budget_usd) << sentence;
    EXPECT_EQ(*a.budget_usd, usd) << sentence;
  }
  json got = json::object();
  for (const auto& f : understand("pré-entraîner llama 3.1 8b sur 1,5 billion de jetons", gpus).fields) got[f.name] = f.value;
  EXPECT_EQ(got["tokens"], 1.5e12) << got.dump();
  got = json::object();
  for (const auto& f : understand("pré-entraîner llama 3.1 8b sur 2 milliards de jetons", gpus).fields) got[f.name] = f.value;
  EXPECT_EQ(got["tokens"], 2e9) << got.dump();
  for (const std::string sentence : {"fine-tune llama 3.1 8b on two hundred million tokens",
                                     "affiner llama 3.1 8b sur deux cents millions de jetons",
                                     "ปรับแต่ง llama 3.1 8b บนสองร้อยล้านโทเค็น"}) {
    const AskResult a = understand(sentence, gpus);
    EXPECT_NE(std::find(a.missing.begin(), a.missing.end(), "tokens"), a.missing.end()) << sentence;
    ASSERT_EQ(a.unread.size(), 1u) << sentence << ": " << to_json(a).dump();
    EXPECT_TRUE(a.unread[0].ends_with("tokens") || a.unread[0].ends_with("jetons") || a.unread[0].ends_with("โทเค็น"))
        << a.unread[0];
  }
}

// The marks a sentence puts on its numbers are kept (a trial: "≥ 200M tokens" and "about $500"
// echoed as plain numbers), with the words they were read from; a field read but not used by
// the planner says why and stays out of the plan body (never silently dropped, never guessed).
TEST(Assistant, MarksOnNumbersAndFieldsNotUsedAreKept) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  struct Expect {
    const char* sentence;
    const char* field;
    const char* mark;      // "≥", "≈", "≤" or ""
    const char* source;    // the words, the mark included
    const char* not_used;  // "" = used
  };
  const std::vector<Expect> rows = {
      {"fine-tune llama 3.1 8b with lora on at least 200M tokens", "tokens", "\u2265", "at least 200m tokens", ""},
      {"fine-tune llama 3.1 8b with lora on \u2265 200M tokens", "tokens", "\u2265", "\u2265 200m tokens", ""},
      {"fine-tune llama 3.1 8b with lora on ~300M tokens", "tokens", "\u2248", "~300m tokens", ""},
      {"fine-tune llama 3.1 8b with lora on 300M tokens for about $500", "budget_usd", "\u2248", "about $500", ""},
      {"fine-tune llama 3.1 8b with lora on 300M tokens under $500", "budget_usd", "\u2264", "under $500", ""},
      {"fine-tune llama 3.1 8b with lora on 300M tokens for 500\u20ac", "budget_eur", "", "500\u20ac", "currency"},
      // A negated comparative ends with a positive one: trial 8 read "no more than $50" as ≥ $50.
      {"fine-tune llama 3.1 8b with lora on 100M tokens for no more than $50", "budget_usd", "\u2264", "no more than $50", ""},
      {"fine-tune llama 3.1 8b with lora on 100M tokens, not over $50", "budget_usd", "\u2264", "not over $50", ""},
      {"affiner llama 3.1 8b en lora sur 100 millions de jetons pour pas plus de 50 $", "budget_usd", "\u2264",
       "pas plus de 50 $", ""},
      {"fine-tune llama 3.1 8b with lora on no less than 200M tokens", "tokens", "\u2265", "no less than 200m tokens", ""},
      {"affiner llama 3.1 8b sur environ 300 millions de jetons", "tokens", "\u2248", "environ 300 millions de jetons", ""},
      {"affiner llama 3.1 8b sur au moins 300 millions de jetons", "tokens", "\u2265", "au moins 300 millions de jetons", ""},
      {"ไฟน์จูน Llama 3.1 8B บนประมาณ 200 ล้านโทเคน", "tokens", "\u2248", "ประมาณ 200 ล้านโทเคน", ""},
      {"ไฟน์จูน Llama 3.1 8B บนอย่างน้อย 200 ล้านโทเคน", "tokens", "\u2265", "อย่างน้อย 200 ล้านโทเคน", ""},
      {"ไฟน์จูน Llama 3.1 8B บน 200 ล้านโทเคน ภายใน 2 วัน", "deadline_seconds", "\u2264", "ภายใน 2 วัน", ""},
      // A training budget in a serving sentence: read, shown, not sent (the planner refuses a
      // field of another task, issue 11).
      {"serve llama 3.1 8b to 50 users with 2000 tokens per request", "tokens", "", "2000 tokens", "not_for_task"},
      {"servir llama 3.1 8b pour 50 utilisateurs avec 2000 jetons par requ\u00eate", "tokens", "", "2000 jetons", "not_for_task"},
  };
  for (const auto& r : rows) {
    const AskResult a = understand(r.sentence, gpus);
    const UnderstoodField* f = nullptr;
    for (const auto& x : a.fields)
      if (x.name == r.field) f = &x;
    ASSERT_NE(f, nullptr) << r.sentence;
    EXPECT_EQ(f->mark, r.mark) << r.sentence;
    EXPECT_EQ(f->source, r.source) << r.sentence;
    EXPECT_EQ(f->not_used, r.not_used) << r.sentence;
    EXPECT_EQ(a.plan_body().contains(r.field), std::string(r.not_used).empty() && std::string(r.field) == "tokens") << r.sentence;
  }
  // TPOT and TTFT go to the planner exactly when its request table has those fields (helper
  // plan6 adds --tpot-ms / --ttft-ms); until then they are read and marked not used.
  bool plan_has_tpot = false;
  for (const auto& d : plan_fields()) plan_has_tpot = plan_has_tpot || d.info.name == "tpot_ms";
  const AskResult a = understand("serve llama 3.1 8b at 10 requests per second with 50 ms per token", gpus);
  const auto tpot = std::find_if(a.fields.begin(), a.fields.end(), [](const auto& f) { return f.name == "tpot_ms"; });
  ASSERT_NE(tpot, a.fields.end());
  EXPECT_EQ(tpot->value, 50);
  EXPECT_EQ(tpot->not_used, plan_has_tpot ? "" : "no_plan_field");
  EXPECT_EQ(a.plan_body().contains("tpot_ms"), plan_has_tpot);
  // The negated task is not the one read, in every order.
  for (const char* s : {"fine-tune llama 3.1 8b without qlora", "fine-tune llama 3.1 8b, not a QLoRA",
                        "affiner llama 3.1 8b sans QLoRA", "ไฟน์จูน Llama 3.1 8B ไม่เอา QLoRA"}) {
    const AskResult n = understand(s, gpus);
    for (const auto& x : n.fields)
      if (x.name == "task") {
        EXPECT_NE(x.value, "qlora") << s;
      }
  }
}

}  // namespace
}  // namespace gpuplan::api
