#!/usr/bin/env bash
# usage: start_k3_server.sh MODEL_DIR PORT LOGFILE [extra vllm serve args...]
# Serves the tiny K3-format model with the REAL Kimi K3 frontend parsers, lean CPU flags.
set -u
MODEL=$1; PORT=$2; LOG=$3; shift 3
VENV=${VENV:-<venv>}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 VLLM_ENABLE_V1_MULTIPROCESSING=0
START=$(date +%s.%N)
nohup "$VENV/bin/vllm" serve "$MODEL" --host 127.0.0.1 --port "$PORT" \
  --max-model-len 2048 --dtype bfloat16 --enforce-eager --distributed-executor-backend uni \
  --kv-cache-memory-bytes 64M \
  --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 --enable-auto-tool-choice \
  "$@" > "$LOG" 2>&1 &
PID=$!
echo "pid=$PID"
for _ in $(seq 1 400); do
  if curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health" 2>/dev/null | grep -q 200; then
    echo "ready after $(python3 -c "import time;print(round(time.time()-$START,1))") s"; exit 0
  fi
  if ! kill -0 $PID 2>/dev/null; then echo "server died"; tail -40 "$LOG"; exit 1; fi
  sleep 0.5
done
echo "timeout"; exit 1
