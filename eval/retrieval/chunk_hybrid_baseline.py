#!/usr/bin/env python3
"""Plain-RAG baseline over a BEIR folder: BM25 + MiniLM hybrid over ~120-word chunks, documents
ranked from their chunks. Prints one JSON object per variant (same keys as bm25_baseline.py).

Usage: chunk_hybrid_baseline.py <beir dir> [--qrels qrels/test.tsv] [--k 100]
                                [--chunk-words 120] [--overlap 20] [--candidates 100]
                                [--no-title-prefix] [--no-stem] [--model-dir DIR]
       chunk_hybrid_baseline.py --self-test

Folder, queries, qrels, state pairs and metrics: exactly those of bm25_baseline.py (imported
from it). --qrels names the qrels file (default qrels/test.tsv); only its queries and their state
pairs are used, so e.g. `keps/ --qrels qrels/dev.tsv` never asks a test query.

Chunks. Each document's "title + newline + text" is split on whitespace into words and cut into
windows of --chunk-words words (default 120) starting every chunk-words - overlap words (default
overlap 20, so a window starts every 100 words); the last window ends at the last word (a
document of at most chunk-words words is one chunk). The words of a window are joined with single
spaces. Every chunk after the first is prefixed with "title + newline" (the first already starts
with the title), unless --no-title-prefix; so a chunk is at most chunk-words words plus the title.

Variants (document score = the maximum over the document's chunks; a document is ranked when at
least one of its chunks is; ranking by descending score, ties in corpus order, at most --k):
  chunk-bm25           bm25s at its defaults (Lucene, k1=1.5, b=0.75) over the chunks, tokenised
                       as bm25_baseline.py does (lowercased \\w\\w+, English stopwords, Snowball
                       stem); chunks with a positive score count.
  chunk-dense          cosine of all-MiniLM-L6-v2 vectors (mean pooling, L2-normalised, inputs
                       truncated at 256 word pieces as sentence-transformers does) of the query
                       and every chunk.
  chunk-hybrid-minmax  per query, the top --candidates (default 100) chunks of each side (BM25:
                       positive scores only); each side's scores min-max normalised over its own
                       candidates ((s - min) / (max - min); 1 when max = min); hybrid
                       = 0.5 * bm25_norm + 0.5 * cos_norm over the union, a side where the chunk
                       is not a candidate counting 0.
  chunk-hybrid-rrf     reciprocal-rank fusion over the same candidate lists:
                       sum over the lists holding the chunk of 1 / (60 + rank), rank from 1.
Documents with no candidate chunk are not ranked by the two hybrids (plain-RAG behaviour).

Embeddings come from eval/embedder/reference.py: its weights loading (Bert), tokenizer setup
(truncation at 256), stripping, mean pooling and normalisation (embed). The forward pass is its
Bert.forward redone in float32 with scipy.special.erf for the exact GELU, for one unpadded text
at a time: the float64 reference with a per-element math.erf takes ~4 s per 256-token chunk,
hours over a few thousand chunks. The result agrees with the reference to cosine > 0.99999 (the
six published cosines are reproduced to 1e-4; checked when the model loads). One OpenBLAS thread
unless OPENBLAS_NUM_THREADS says otherwise. Chunk vectors are cached in
/tmp/epigraph-chunk-emb-<sha256 of model weights + the chunk texts>.npy.
"""
import argparse
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path

# One BLAS thread: texts are encoded one at a time, and on 2 shared cores two OpenBLAS threads
# were 5x slower than one (20 KEP chunks: 19.7 s against 3.5 s).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "embedder"))

from bm25_baseline import evaluate, make_stemmer, read_split, tokenize  # noqa: E402

RRF_K = 60


# ---------------------------------------------------------------------------------------------
# Chunking


def chunk_words(text, size, overlap):
    """Windows of `size` whitespace words starting every size - overlap words, as word lists."""
    assert 0 <= overlap < size, (size, overlap)
    words = text.split()
    if not words:
        return [[]]
    step = size - overlap
    out = []
    for start in range(0, len(words), step):
        out.append(words[start:start + size])
        if start + size >= len(words):
            break
    return out


def chunk_document(doc, size, overlap, title_prefix=True):
    """The chunk texts of one {"_id", "title", "text"} document."""
    title = doc.get("title") or ""
    windows = chunk_words(title + "\n" + (doc.get("text") or ""), size, overlap)
    chunks = []
    for i, words in enumerate(windows):
        body = " ".join(words)
        chunks.append(title + "\n" + body if title_prefix and i > 0 and title else body)
    return chunks


def chunk_corpus(corpus, size, overlap, title_prefix=True):
    """(chunk texts, index of each chunk's document in corpus)."""
    texts, owner = [], []
    for di, doc in enumerate(corpus):
        for c in chunk_document(doc, size, overlap, title_prefix):
            texts.append(c)
            owner.append(di)
    return texts, owner


# ---------------------------------------------------------------------------------------------
# Fusion and document ranking


def top_candidates(scores, n, positive_only=False):
    """Indices of the n highest scores (ties: lower index first)."""
    idx = [i for i in range(len(scores)) if not positive_only or scores[i] > 0]
    idx.sort(key=lambda i: (-float(scores[i]), i))
    return idx[:n]


def minmax(values):
    """Min-max normalised values; all 1.0 when they are all equal."""
    lo, hi = min(values), max(values)
    if hi == lo:
        return [1.0 for _ in values]
    return [(v - lo) / (hi - lo) for v in values]


def fuse_minmax(bm25_cands, bm25_scores, dense_cands, dense_scores, weight=0.5):
    """{chunk: weight * bm25_norm + (1 - weight) * cos_norm} over the union of the candidates."""
    out = {}
    if bm25_cands:
        for c, v in zip(bm25_cands, minmax([float(bm25_scores[c]) for c in bm25_cands])):
            out[c] = out.get(c, 0.0) + weight * v
    if dense_cands:
        for c, v in zip(dense_cands, minmax([float(dense_scores[c]) for c in dense_cands])):
            out[c] = out.get(c, 0.0) + (1 - weight) * v
    return out


def fuse_rrf(*ranked_lists, k=RRF_K):
    """{chunk: sum over the lists holding it of 1 / (k + rank)}, rank from 1."""
    out = {}
    for lst in ranked_lists:
        for rank, c in enumerate(lst, start=1):
            out[c] = out.get(c, 0.0) + 1.0 / (k + rank)
    return out


def doc_ranking(chunk_scores, owner, doc_ids, depth):
    """Documents by the max score of their chunks ({chunk: score}); ties in corpus order."""
    best = {}
    for c, s in chunk_scores.items():
        d = owner[c]
        if d not in best or s > best[d]:
            best[d] = s
    order = sorted(best, key=lambda d: (-best[d], d))
    return [doc_ids[d] for d in order[:depth]]


# ---------------------------------------------------------------------------------------------
# MiniLM embeddings (eval/embedder/reference.py)


def load_embedder(model_dir):
    import numpy as np
    import reference
    from scipy.special import erf

    class Float32Bert(reference.Bert):
        """reference.Bert's forward pass in float32 with a vectorised erf GELU, for one
        unpadded text (attention mask all ones, so no attention bias)."""

        def __init__(self, model_dir):
            super().__init__(model_dir)
            self.w = {k: v.astype(np.float32) for k, v in self.w.items()}

        @staticmethod
        def gelu(x):
            return 0.5 * x * (1.0 + erf(x / np.float32(math.sqrt(2.0))))

        def forward(self, ids, type_ids, mask):
            assert mask.all(), "one text at a time: nothing is padded"
            seq = len(ids)
            w = self.w
            x = (w["embeddings.word_embeddings.weight"][ids]
                 + w["embeddings.position_embeddings.weight"][np.arange(seq)]
                 + w["embeddings.token_type_embeddings.weight"][type_ids])
            x = self.layer_norm(x, "embeddings.LayerNorm")
            hd = self.hidden // self.heads
            scale = np.float32(1.0 / math.sqrt(hd))
            for i in range(self.layers):
                p = f"encoder.layer.{i}"
                q, k, v = (self.linear(x, f"{p}.attention.self.{n}")
                           .reshape(seq, self.heads, hd).transpose(1, 0, 2)
                           for n in ("query", "key", "value"))
                scores = q @ k.transpose(0, 2, 1) * scale
                scores -= scores.max(-1, keepdims=True)
                probs = np.exp(scores)
                probs /= probs.sum(-1, keepdims=True)
                context = (probs @ v).transpose(1, 0, 2).reshape(seq, self.hidden)
                x = self.layer_norm(self.linear(context, p + ".attention.output.dense") + x,
                                    p + ".attention.output.LayerNorm")
                inner = self.gelu(self.linear(x, p + ".intermediate.dense"))
                x = self.layer_norm(self.linear(inner, p + ".output.dense") + x,
                                    p + ".output.LayerNorm")
            return x.astype(np.float64)

    bert = Float32Bert(model_dir)
    tokenizer = reference.load_tokenizer(model_dir)
    truncated = [0]

    def embed_texts(texts, progress=None):
        vecs = np.zeros((len(texts), bert.hidden), dtype=np.float32)
        t0 = time.time()
        for i, t in enumerate(texts):
            v, n = reference.embed(bert, tokenizer, t)
            truncated[0] += n >= reference.MAX_SEQ_LENGTH
            vecs[i] = v
            if progress and (i + 1) % 200 == 0:
                print(f"  {progress}: {i + 1}/{len(texts)} in {time.time() - t0:.0f} s",
                      file=sys.stderr, flush=True)
        return vecs

    for a, b, published in reference.PUBLISHED:
        va, vb = embed_texts([a, b])
        assert abs(float(va @ vb) - published) < 1e-4, (a, b, float(va @ vb), published)
    truncated[0] = 0
    embed_texts.truncated = truncated
    embed_texts.bert, embed_texts.tokenizer = bert, tokenizer
    return embed_texts


def model_digest(model_dir):
    return hashlib.sha256((model_dir / "model.safetensors").read_bytes()).hexdigest()


def chunk_vectors(texts, model_dir, embed_texts):
    import numpy as np

    h = hashlib.sha256(model_digest(model_dir).encode())
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\0")
    path = Path("/tmp") / f"epigraph-chunk-emb-{h.hexdigest()[:24]}.npy"
    if path.exists():
        vecs = np.load(path)
        if vecs.shape[0] == len(texts):
            print(f"chunk vectors from cache {path}", file=sys.stderr)
            return vecs, path, True
    vecs = embed_texts(texts, progress="chunks")
    np.save(path, vecs)
    return vecs, path, False


# ---------------------------------------------------------------------------------------------


def run(args):
    import bm25s
    import numpy as np
    import reference

    t_start = time.time()
    corpus, queries, qrels, state = read_split(args.beir_dir, args.qrels)
    doc_ids = [d["_id"] for d in corpus]
    texts, owner = chunk_corpus(corpus, args.chunk_words, args.overlap,
                                title_prefix=not args.no_title_prefix)
    lengths = [len(t.split()) for t in texts]
    print(f"{len(corpus)} documents -> {len(texts)} chunks (words per chunk: mean "
          f"{sum(lengths) / len(lengths):.1f}, max {max(lengths)}); {len(queries)} queries",
          file=sys.stderr)

    # BM25 over chunks
    stemmer = make_stemmer(not args.no_stem)
    retriever = bm25s.BM25()
    retriever.index(tokenize(texts, stemmer), show_progress=False)
    query_tokens = tokenize([q["text"] for q in queries], stemmer, return_ids=False)
    bm25 = {q["_id"]: (retriever.get_scores(toks) if toks else np.zeros(len(texts)))
            for q, toks in zip(queries, query_tokens)}

    # Dense over chunks
    model_dir = args.model_dir or reference.default_model_dir()
    embed_texts = load_embedder(model_dir)
    t0 = time.time()
    cvecs, cache_path, cached = chunk_vectors(texts, model_dir, embed_texts)
    t_chunks = time.time() - t0
    n_trunc = embed_texts.truncated[0]
    t0 = time.time()
    qvecs = embed_texts([q["text"] for q in queries])
    t_queries = time.time() - t0
    dense = {q["_id"]: cvecs @ qv for q, qv in zip(queries, qvecs)}

    rankings = {v: {} for v in ("chunk-bm25", "chunk-dense", "chunk-hybrid-minmax",
                                "chunk-hybrid-rrf")}
    n = args.candidates
    for q in queries:
        qid = q["_id"]
        b, c = bm25[qid], dense[qid]
        all_b = {i: float(b[i]) for i in range(len(texts)) if b[i] > 0}
        all_c = {i: float(c[i]) for i in range(len(texts))}
        rankings["chunk-bm25"][qid] = doc_ranking(all_b, owner, doc_ids, args.k)
        rankings["chunk-dense"][qid] = doc_ranking(all_c, owner, doc_ids, args.k)
        b_cands = top_candidates(b, n, positive_only=True)
        c_cands = top_candidates(c, n)
        rankings["chunk-hybrid-minmax"][qid] = doc_ranking(
            fuse_minmax(b_cands, b, c_cands, c), owner, doc_ids, args.k)
        rankings["chunk-hybrid-rrf"][qid] = doc_ranking(
            fuse_rrf(b_cands, c_cands), owner, doc_ids, args.k)

    if args.rankings_out:
        args.rankings_out.write_text(json.dumps(
            {system: {q: r[:20] for q, r in per.items()} for system, per in rankings.items()}))
    for system, r in rankings.items():
        json.dump(evaluate(r, qrels, state, system), sys.stdout)
        sys.stdout.write("\n")
    print(json.dumps({
        "chunks": len(texts),
        "chunks_truncated_at_256_word_pieces": None if cached else n_trunc,
        "chunk_embedding_seconds": round(t_chunks, 1),
        "chunk_vectors_cached": cached,
        "cache": str(cache_path),
        "query_embedding_seconds": round(t_queries, 1),
        "total_seconds": round(time.time() - t_start, 1),
    }), file=sys.stderr)


# ---------------------------------------------------------------------------------------------


def self_test():
    def words(n, prefix="w"):
        return " ".join(f"{prefix}{i}" for i in range(n))

    # Windows: 120 words, a start every 100, the last one ending at the last word.
    assert [len(c) for c in chunk_words(words(250), 120, 20)] == [120, 120, 50]
    assert [len(c) for c in chunk_words(words(220), 120, 20)] == [120, 120]
    assert [len(c) for c in chunk_words(words(120), 120, 20)] == [120]
    assert [len(c) for c in chunk_words(words(7), 120, 20)] == [7]
    assert [len(c) for c in chunk_words(words(221), 120, 20)] == [120, 120, 21]
    w = chunk_words(words(250), 120, 20)
    assert w[0][-20:] == w[1][:20] and w[1][-20:] == w[2][:20], "20-word overlap"
    assert w[1][0] == "w100" and w[2][0] == "w200" and w[2][-1] == "w249"
    assert [len(c) for c in chunk_words(words(10), 4, 0)] == [4, 4, 2]

    # Title prefix: the document text is "title\ntext"; later chunks get "title\n" in front.
    doc = {"_id": "d", "title": "Gang scheduling", "text": words(247)}  # 2 + 247 = 249 words
    chunks = chunk_document(doc, 120, 20)
    assert len(chunks) == 3, len(chunks)
    assert chunks[0].startswith("Gang scheduling w0 ") and len(chunks[0].split()) == 120
    assert chunks[1].startswith("Gang scheduling\nw98 ") and len(chunks[1].split()) == 122
    assert chunks[2].startswith("Gang scheduling\nw198 ") and chunks[2].endswith("w246")
    assert len(chunks[2].split()) == 2 + 49
    bare = chunk_document(doc, 120, 20, title_prefix=False)
    assert bare[0] == chunks[0] and bare[1].startswith("w98 ") and len(bare[1].split()) == 120
    assert not any(c.startswith("Gang") for c in bare[1:])
    texts, owner = chunk_corpus([doc, {"_id": "e", "title": "", "text": "one two"}], 120, 20)
    assert owner == [0, 0, 0, 1] and texts[3] == "one two"

    # Min-max fusion on hand-made numbers. Chunks 0..4.
    bm25 = [4.0, 0.0, 2.0, 1.0, 0.0]
    cos = [0.30, 0.80, 0.50, 0.10, 0.60]
    b_c = top_candidates(bm25, 100, positive_only=True)
    c_c = top_candidates(cos, 3)
    assert b_c == [0, 2, 3] and c_c == [1, 4, 2]
    # bm25 norm over {4,2,1}: 1, 1/3, 0; cos norm over {.8,.6,.5}: 1, 1/3, 0
    fused = fuse_minmax(b_c, bm25, c_c, cos)
    want = {0: 0.5, 2: 0.5 / 3 + 0.0, 3: 0.0, 1: 0.5, 4: 0.5 / 3}
    assert set(fused) == set(want) and all(abs(fused[k] - v) < 1e-12 for k, v in want.items()), fused
    assert fuse_minmax([2], bm25, [], cos) == {2: 0.5}, "one candidate normalises to 1"
    # RRF, k=60: chunk 2 is 2nd in BM25 and 3rd in dense.
    rrf = fuse_rrf(b_c, c_c)
    assert abs(rrf[2] - (1 / 62 + 1 / 63)) < 1e-15 and abs(rrf[0] - 1 / 61) < 1e-15
    assert abs(rrf[1] - 1 / 61) < 1e-15 and abs(rrf[3] - 1 / 63) < 1e-15
    # Documents: chunk owners 0->A, 1->B, 2->A, 3->C, 4->B; doc score = max over its chunks.
    owner = [0, 1, 0, 2, 1]
    ids = ["A", "B", "C"]
    assert doc_ranking(rrf, owner, ids, 10) == ["A", "B", "C"]  # A: 1/62+1/63 > B: 1/61
    # minmax: A = max(.5, .1667) = .5, B = max(.5, .1667) = .5 (tie: corpus order), C = 0
    assert doc_ranking(fused, owner, ids, 10) == ["A", "B", "C"]
    assert doc_ranking(fused, owner, ids, 1) == ["A"]
    assert doc_ranking({3: 1.0, 1: 0.5}, owner, ids, 10) == ["C", "B"]
    print("self-test ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("beir_dir", type=Path, nargs="?")
    ap.add_argument("--qrels", type=Path, default=Path("qrels/test.tsv"),
                    help="qrels file relative to the folder (default qrels/test.tsv)")
    ap.add_argument("--k", type=int, default=100, help="documents kept per query")
    ap.add_argument("--chunk-words", type=int, default=120)
    ap.add_argument("--overlap", type=int, default=20)
    ap.add_argument("--candidates", type=int, default=100,
                    help="chunks taken from each side before fusion")
    ap.add_argument("--no-title-prefix", action="store_true",
                    help="do not prefix chunks after the first with the title")
    ap.add_argument("--no-stem", action="store_true", help="BM25 without stemming")
    ap.add_argument("--model-dir", type=Path, default=None,
                    help="all-MiniLM-L6-v2 files (default $EPIGRAPH_HOME/models/all-MiniLM-L6-v2)")
    ap.add_argument("--rankings-out", type=Path, default=None,
                    help="write each variant's top 20 documents per query to this JSON file")
    ap.add_argument("--self-test", action="store_true",
                    help="check chunking and fusion on hand-made inputs (no model) and exit")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if args.beir_dir is None:
        ap.error("a BEIR folder is required (or --self-test)")
    run(args)


if __name__ == "__main__":
    main()
