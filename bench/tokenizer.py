"""make bench-tokenizer: GPT-2 encoding speed of ltrain.h, tiktoken and Hugging Face tokenizers.

    /work/venv/bin/python bench/tokenizer.py [--rounds 5] [--shared ../shared/data] [--out bench/tokenizer.md]

For each text (tinyshakespeare, and tinyshakespeare repeated 8 times) and each round, the three
run one after another (ltrain.h in build/bench_tokenizer, a separate process; then tiktoken and
HF in this one), so a change in the machine's load touches all three alike; the table gives the
median MB/s (input bytes per second) of the rounds, and the fastest.  Every measurement starts
from a freshly loaded tokenizer (HF and ltrain.h keep a cache of encoded words; tiktoken has none)
and encodes ordinary text (special-token strings stay text):
  1 thread   ltrain.h lt_tok_encode on the whole text; tiktoken encode_ordinary; HF encode_batch
             of the text cut into 256 pieces as below (its encode of one book-long sequence is
             many times slower)
  N threads  the text cut into 8N chunks after a "\\n" between a non-space and a letter (where
             GPT-2's pre-tokens do not change); ltrain.h: OpenMP, one tokenizer per thread; tiktoken
             encode_ordinary_batch(num_threads=N); HF encode_batch (rayon, N threads)
HF's single-thread row runs in a child process with RAYON_NUM_THREADS=1 (HF reads it once, at
its first parallel call), the N-thread row in this process.  Token counts are checked equal.
Also written: the CPU (lscpu model name, SIMD flags), the load average before and after, the
memory of the loaded GPT-2 vocabulary (lt_tok_memory, and the RSS growth of loading it in C and
in Python), and the time to train a 4096-token vocabulary on tinyshakespeare (build/tokenize
--train-vocab, as printed, against HF's BpeTrainer with the same settings; one run each, 1 thread
for HF via RAYON_NUM_THREADS=1 in a child process)."""
import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_info():
    name, flags = "?", []
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() == "Model name":
                name = v.strip()
            if k.strip() == "Flags":
                have = set(v.split())
                flags = [f for f in ("sse4_2", "avx2", "bmi2", "avx512f", "avx512bw", "avx512vl", "avx512_vbmi2") if f in have]
    except OSError:
        pass
    return name, flags


def loadavg():
    try:
        return open("/proc/loadavg").read().split()[:3]
    except OSError:
        return ["?"] * 3


def chunks(text, n):
    """Cut points near k*len/n moved forward to just after a "\\n" that follows a non-space and
    precedes a letter (as bench/tokenizer.c cuts)."""
    cuts = [0]
    for k in range(1, n):
        p = max(len(text) * k // n, cuts[-1])
        while p < len(text) and not (p >= 2 and text[p - 1] == "\n" and not text[p - 2].isspace()
                                     and text[p].isalpha() and text[p].isascii()):
            p += 1
        if cuts[-1] < p < len(text):
            cuts.append(p)
    cuts.append(len(text))
    return [text[a:b] for a, b in zip(cuts, cuts[1:])]


def hf_single(parts, gpt2_dir):
    """HF single-threaded in a child (RAYON_NUM_THREADS=1): encode_batch over the pieces (HF's
    fast way: encode() of a whole book as one sequence runs many times slower); seconds and
    token count."""
    code = ("import sys,time,json;from tokenizers import Tokenizer,models,pre_tokenizers,decoders\n"
            "p=json.load(open(sys.argv[1],encoding='utf-8'))\n"
            "tk=Tokenizer(models.BPE.from_file(sys.argv[2]+'/encoder.json',sys.argv[2]+'/vocab.bpe'))\n"
            "tk.pre_tokenizer=pre_tokenizers.ByteLevel(add_prefix_space=False)\n"
            "s=time.perf_counter();n=sum(len(e.ids) for e in tk.encode_batch(p));print(time.perf_counter()-s,n)\n")
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8", delete=False) as f:
        json.dump(parts, f)
    try:
        out = subprocess.run([sys.executable, "-c", code, f.name, gpt2_dir], capture_output=True, text=True,
                             env=env, check=True).stdout.split()
    finally:
        os.unlink(f.name)
    return float(out[0]), int(out[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--shared", default=os.environ.get("LT_SHARED_DIR", os.path.join(ROOT, "..", "shared", "data")))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "tokenizer.md"))
    ap.add_argument("--note", default="", help="a sentence for the results file (e.g. what else ran)")
    a = ap.parse_args()
    import tiktoken
    from tokenizers import Tokenizer, models, pre_tokenizers

    gpt2_dir = os.path.join(a.shared, "gpt2-bpe")
    path = os.path.join(a.shared, "tinyshakespeare.txt")
    if not os.path.exists(path) or not os.path.exists(os.path.join(gpt2_dir, "vocab.bpe")):
        sys.exit("bench/tokenizer.py: needs %s and %s/{encoder.json,vocab.bpe}" % (path, gpt2_dir))
    nthreads = os.cpu_count() or 1
    base = open(path, encoding="utf-8").read()
    name, flags = cpu_info()
    load0 = loadavg()

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # GPT-2 from the two local files (get_encoding("gpt2") would download them)
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks
    from tiktoken_ext.openai_public import r50k_pat_str
    ranks = data_gym_to_mergeable_bpe_ranks(vocab_bpe_file=os.path.join(gpt2_dir, "vocab.bpe"),
                                            encoder_json_file=os.path.join(gpt2_dir, "encoder.json"))
    enc = tiktoken.Encoding("gpt2-local", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50257)
    enc.encode_ordinary("warm up")
    rss_tt = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0

    def hf_load():
        tk = Tokenizer(models.BPE.from_file(os.path.join(gpt2_dir, "encoder.json"), os.path.join(gpt2_dir, "vocab.bpe")))
        tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        return tk

    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hf_load()
    rss_hf = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss1

    rows = {}
    cinfo = {}
    for repeat in (1, 8):
        text = base * repeat
        mb = len(text.encode("utf-8")) / 1e6
        parts = chunks(text, 8 * nthreads)
        parts1 = chunks(text, 256)   # HF's 1-thread row: a batch of pieces
        res = {k: [] for k in ("lt1", "ltN", "tt1", "ttN", "hf1", "hfN")}
        counts = {}
        for r in range(a.rounds):
            out = subprocess.run([os.path.join(ROOT, "build", "bench_tokenizer"), gpt2_dir, path, "--repeat", str(repeat),
                                  "--threads", str(nthreads)], capture_output=True, text=True, check=True).stdout
            kv = dict(x.split("=") for x in out.split())
            cinfo = kv
            res["lt1"].append(mb / float(kv["t1_s"]))
            res["ltN"].append(mb / float(kv["tn_s"]))
            counts["lt1"], counts["ltN"] = int(kv["tokens"]), int(kv["tn_tokens"])
            t = time.perf_counter(); ids = enc.encode_ordinary(text); res["tt1"].append(mb / (time.perf_counter() - t))
            counts["tt1"] = len(ids)
            t = time.perf_counter(); b = enc.encode_ordinary_batch(parts, num_threads=nthreads)
            res["ttN"].append(mb / (time.perf_counter() - t)); counts["ttN"] = sum(map(len, b))
            s, c = hf_single(parts1, gpt2_dir); res["hf1"].append(mb / s); counts["hf1"] = c
            tk = hf_load()
            t = time.perf_counter(); b = tk.encode_batch(parts); res["hfN"].append(mb / (time.perf_counter() - t))
            counts["hfN"] = sum(len(e.ids) for e in b)
            print("text x%d round %d: %s" % (repeat, r + 1, " ".join("%s %.2f" % (k, v[-1]) for k, v in res.items())),
                  flush=True)
        rows[repeat] = (mb, res, counts)
    tr_c = float(subprocess.run([os.path.join(ROOT, "build", "tokenize"), "--in", path, "--out", os.devnull,
                                 "--train-vocab", "4096", "--save-tokenizer", os.path.join(ROOT, "build", "tmp", "bench_tok.json")],
                                capture_output=True, text=True, check=True).stdout.split(" in ")[1].split(" s")[0])
    code = ("import sys,time;sys.path.insert(0,sys.argv[2]);from gen_bpe import train\n"
            "t=open(sys.argv[1],encoding='utf-8').read();s=time.perf_counter();train(t,4096);print(time.perf_counter()-s)\n")
    tr_hf = float(subprocess.run([sys.executable, "-c", code, path, os.path.join(ROOT, "tests", "ref")], capture_output=True,
                                 text=True, check=True, env=dict(os.environ, RAYON_NUM_THREADS="1")).stdout)
    load1 = loadavg()

    L = ["# Tokenizer speed: GPT-2 encoding, ltrain.h vs tiktoken vs Hugging Face tokenizers", "",
         "Written by `make bench-tokenizer` (bench/tokenizer.py, bench/tokenizer.c); method in the script's docstring.",
         "MB/s = input megabytes (10^6 bytes) per second; median of %d alternating rounds (fastest in brackets)." % a.rounds,
         "1 thread: ltrain.h and tiktoken encode the whole text in one call, HF encode_batch a list of 256 pieces of it "
         "(with RAYON_NUM_THREADS=1); N threads: all three take 8N pieces.",
         "",
         "- CPU: %s; flags: %s; %d logical CPUs (the N-thread rows use all)" % (name, " ".join(flags) or "-", nthreads),
         "- load average before: %s; after: %s" % (" ".join(load0), " ".join(load1)),
         "- tiktoken %s, tokenizers %s, Python %s" % (tiktoken.__version__ if hasattr(tiktoken, "__version__") else "?",
                                                      __import__("tokenizers").__version__, sys.version.split()[0])]
    if a.note:
        L.append("- " + a.note)
    L += ["", "| text | MB | threads | ltrain.h MB/s | tiktoken MB/s | HF tokenizers MB/s | tokens (all equal) |",
          "|---|---|---|---|---|---|---|"]
    for repeat, (mb, res, counts) in rows.items():
        same = len(set(counts.values())) == 1
        for th, key in ((1, "1"), (nthreads, "N")):
            cell = lambda k: "%.1f (%.1f)" % (statistics.median(res[k + key]), max(res[k + key]))
            L.append("| tinyshakespeare%s | %.2f | %d | %s | %s | %s | %s |" % (
                "" if repeat == 1 else " x%d" % repeat, mb, th, cell("lt"), cell("tt"), cell("hf"),
                "%d%s" % (counts["tt1"], "" if same else " DIFFER: " + json.dumps(counts))))
    L += ["", "Memory of the loaded GPT-2 vocabulary (50,257 tokens, 50,000 merges):", "",
          "- ltrain.h: lt_tok_memory %.2f MB; resident set growth across lt_tok_load_gpt2 %.2f MB (loading %.0f ms)" % (
              int(cinfo.get("vocab_bytes", 0)) / 1e6, int(cinfo.get("rss_load_kb", 0)) / 1024.0, float(cinfo.get("load_ms", 0))),
          "- Python, peak RSS growth: tiktoken Encoding from the two files %.1f MB, HF BPE.from_file %.1f MB (for scale; what"
          " the RSS counts differs between allocators)" % (rss_tt / 1024.0, rss_hf / 1024.0), "",
          "Training a 4096-token byte-level BPE vocabulary on tinyshakespeare (the same merges): "
          "ltrain.h lt_bpe_train %.2f s (1 thread), HF BpeTrainer %.2f s (RAYON_NUM_THREADS=1)." % (tr_c, tr_hf), ""]
    open(a.out, "w").write("\n".join(L))
    print("\n".join(L))


if __name__ == "__main__":
    main()
