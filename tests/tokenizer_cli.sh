#!/bin/sh
# tests/tokenizer_cli.sh: the tokenizer paths of the programs, as a user runs them (make test).
#   build/tokenize --train-vocab (tokenizer.json and GPT-2's pair saved, the shard's header and
#   size, the same shard again through --tokenizer FILE), train_gpt --tokenizer FILE on text and
#   train_gpt on the shard, sample_gpt decoding (and refusing another vocabulary's tokenizer),
#   lesson_sequences counting lengths in tokens, refusals of bad flags and a missing GPT-2
#   directory; with ../shared/data (LT_SHARED_DIR): --tokenizer gpt2 on tinyshakespeare gives
#   tiktoken's count.  Needs build/tokenize, build/train_gpt, build/sample_gpt,
#   build/lesson_sequences.  Prints ok/FAIL/skip lines and "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
T=build/tmp/tokcli
rm -rf "$T"; mkdir -p "$T/g"
P=0; F=0; S=0
ok() { echo "ok   tok.cli.$1"; P=$((P + 1)); }
fail() { echo "FAIL tok.cli.$1: $2"; F=$((F + 1)); }
skip() { echo "skip tok.cli.$1: $2"; S=$((S + 1)); }
check() { name=$1; shift; if "$@" > "$T/$name.out" 2>&1; then ok "$name"; else fail "$name" "$(tail -n 3 "$T/$name.out" | tr '\n' ' ')"; fi; }
refuse() {   # refuse NAME WANT CMD...: exits non-zero and says WANT
    name=$1; want=$2; shift 2
    if "$@" > "$T/$name.out" 2>&1; then fail "$name" "accepted: $*"
    elif grep -q -- "$want" "$T/$name.out"; then ok "$name"
    else fail "$name" "want \"$want\", got: $(head -c 300 "$T/$name.out")"; fi
}
for b in tokenize train_gpt sample_gpt lesson_sequences; do
    [ -x build/$b ] || { echo "FAIL tok.cli: no build/$b (make build/$b)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done
TEXT=tests/ref/bpe_text.txt
bytes=$(wc -c < $TEXT)

check train_vocab build/tokenize --in $TEXT --out "$T/a.bin" --train-vocab 400 --save-tokenizer "$T/tk.json" --save-gpt2 "$T/g"
n=$(sed -n 's/.*-> \([0-9]*\) tokens.*/\1/p' "$T/train_vocab.out")
size=$(wc -c < "$T/a.bin" 2>/dev/null || echo 0)
if [ -n "$n" ] && [ "$size" -eq $((1024 + 2 * n)) ] && [ "$n" -lt "$bytes" ] &&
   [ "$(od -An -tu4 -N12 "$T/a.bin" | tr -s ' ')" = " 20240520 1 $n" ]; then ok shard_header
else fail shard_header "file $size bytes, $n tokens of $bytes bytes, header $(od -An -tu4 -N12 "$T/a.bin")"; fi
merges=$(grep -c . "$T/g/vocab.bpe" 2>/dev/null || echo 0)
[ -s "$T/g/encoder.json" ] && [ "$merges" -eq $((400 - 257 + 1)) ] && ok gpt2_pair || fail gpt2_pair "vocab.bpe has $merges lines (want 144)"
check same_shard sh -c "build/tokenize --in $TEXT --out $T/b.bin --tokenizer $T/tk.json --quiet && cmp $T/a.bin $T/b.bin"
check same_shard_gpt2_pair sh -c "build/tokenize --in $TEXT --out $T/c.bin --tokenizer gpt2 --tokenizer-dir $T/g --quiet && cmp $T/a.bin $T/c.bin"
check train_gpt_text build/train_gpt --data $TEXT --tokenizer "$T/tk.json" --steps 3 --layers 1 --channels 32 --heads 2 \
    --batch 2 --seq 16 --sample 8 --save "$T/m.safetensors"
grep -q "V=400" "$T/train_gpt_text.out" && ok train_gpt_vocab || fail train_gpt_vocab "no V=400 in: $(head -c 300 "$T/train_gpt_text.out")"
check train_gpt_shard build/train_gpt --data "$T/a.bin" --vocab 400 --steps 2 --layers 1 --channels 32 --heads 2 --batch 2 --seq 16
check sample build/sample_gpt "$T/m.safetensors" --tokenizer "$T/tk.json" --n 12 --prompt "The quick"
grep -q "^The quick" "$T/sample.out" && ok sample_prompt || fail sample_prompt "sample does not start with the prompt: $(head -c 200 "$T/sample.out")"
build/tokenize --in $TEXT --out "$T/d.bin" --train-vocab 300 --save-tokenizer "$T/tk300.json" --quiet
refuse sample_mismatch "was trained with the tokenizer" build/sample_gpt "$T/m.safetensors" --tokenizer "$T/tk300.json" --n 4
refuse sample_byte_model "byte-level model" sh -c "build/train_gpt --data $TEXT --steps 1 --layers 1 --channels 32 --heads 2 --batch 2 --seq 16 --save $T/bytes.safetensors >/dev/null && build/sample_gpt $T/bytes.safetensors --tokenizer $T/tk.json --n 4"
refuse missing_gpt2 "hint: --tokenizer-dir" build/train_gpt --data $TEXT --tokenizer gpt2 --tokenizer-dir "$T/none" --steps 1
refuse bad_json "tk_missing.json" build/tokenize --in $TEXT --out "$T/e.bin" --tokenizer "$T/tk_missing.json"
refuse small_vocab "--train-vocab" build/tokenize --in $TEXT --out "$T/e.bin" --train-vocab 100 --save-tokenizer "$T/x.json"
refuse no_save "--save-tokenizer" build/tokenize --in $TEXT --out "$T/e.bin" --train-vocab 300
refuse seqs_lines "--tokenizer reads the text as one stream" build/train_gpt --data $TEXT --tokenizer "$T/tk.json" --seqs lines --steps 1
check llama3_pattern sh -c "build/tokenize --in $TEXT --out $T/l3.bin --train-vocab 500 --pattern llama3 --save-tokenizer $T/l3.json --quiet && build/tokenize --in $TEXT --out $T/l3b.bin --tokenizer $T/l3.json --quiet && cmp $T/l3.bin $T/l3b.bin && grep -q Split $T/l3.json"
refuse llama3_no_gpt2_pair "another pre-tokenizer" build/tokenize --in $TEXT --out "$T/e.bin" --train-vocab 300 --pattern llama3 --save-tokenizer "$T/y.json" --save-gpt2 "$T/g"
check lesson build/lesson_sequences ltrain.h --tokenizer "$T/tk.json" --steps 20 --budget 256 --plot "$T/lesson.svg"
grep -q "tokens of --tokenizer" "$T/lesson.out" && ok lesson_tokens || fail lesson_tokens "no token lengths line"

SH=${LT_SHARED_DIR:-../shared/data}
if [ -f "$SH/tinyshakespeare.txt" ] && [ -f "$SH/gpt2-bpe/vocab.bpe" ]; then
    # 338025: tiktoken.get_encoding("gpt2").encode_ordinary(text) on tinyshakespeare (sha256 86c4e6aa...)
    check gpt2_shakespeare build/tokenize --in "$SH/tinyshakespeare.txt" --out "$T/ts.bin" --tokenizer gpt2 --tokenizer-dir "$SH/gpt2-bpe"
    grep -q -- "-> 338025 tokens" "$T/gpt2_shakespeare.out" && ok gpt2_shakespeare_count ||
        fail gpt2_shakespeare_count "want 338025 tokens: $(head -c 300 "$T/gpt2_shakespeare.out")"
else
    skip gpt2_shakespeare "no tinyshakespeare.txt and gpt2-bpe/ in $SH (LT_SHARED_DIR)"
fi
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]
