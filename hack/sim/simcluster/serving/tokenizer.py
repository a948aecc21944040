"""Write a tiny word-level tokenizer into a Hugging Face cache, as an image would ship one.

Run with the load generator's interpreter (it has `tokenizers`):
`python tokenizer.py HF_HOME REPO_ID`. The files land where the hub client
keeps a downloaded repo (`HF_HOME/hub/models--ORG--NAME/snapshots/REV/`, with
`refs/main`), so the load generator finds `REPO_ID` with `HF_HUB_OFFLINE=1`
and never asks a hub. Its vocabulary is the stand-in server's output word plus
made-up words, enough to synthesise prompts of a given token length.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

VOCAB_WORDS = 512
SERVER_WORD = "tok"  # simcluster.serving.server.WORD


def words() -> list[str]:
    """The vocabulary: special tokens, the server's word, then two-syllable words."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    made = ("".join(p) for p in itertools.product(syllables, repeat=2))
    return ["[UNK]", "[PAD]", SERVER_WORD, *itertools.islice(made, VOCAB_WORDS)]


REVISION = "0" * 40  # the cache keys a snapshot by commit; this one has no upstream


def write(hf_home: Path, repo_id: str) -> Path:
    """Write the tokenizer as ``repo_id``'s cached snapshot; return its folder."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(words())}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    repo = hf_home / "hub" / ("models--" + repo_id.replace("/", "--"))
    folder = repo / "snapshots" / REVISION
    folder.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(REVISION)
    tok.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": "[UNK]",
        "pad_token": "[PAD]",
        "model_max_length": 131072,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=1) + "\n")
    return folder


if __name__ == "__main__":
    print(write(Path(sys.argv[1]), sys.argv[2]))
