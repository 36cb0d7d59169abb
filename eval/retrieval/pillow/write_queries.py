#!/usr/bin/env python3
"""Write queries.jsonl (run from the repo root). Split as fixed in SPLIT_FIXED."""
import json
from pathlib import Path

DEV = set("q01 q03 q05 q07 q11 q13 q15 q17 q19 q21 q23 q27 q29 q31 q33 q35".split())
Q = [
 # state
 ("q01", "state", "Our resize code still passes Image.ANTIALIAS as the filter. Is that constant still there in current Pillow, or what should we pass now?"),
 ("q02", "state", "What is the oldest Python 3 version that the newest Pillow release still supports?"),
 ("q03", "state", "Some old code of ours reads PIL.PILLOW_VERSION to log the library version. Does that attribute still exist?"),
 ("q04", "state", "If I open an image and just let the object go out of scope, will Pillow still close the file handle for me, or must I close it myself?"),
 ("q05", "state", "Can I still measure a string's pixel width and height with draw.textsize() or font.getsize() in the latest Pillow?"),
 ("q06", "state", "Our desktop app converts Pillow images for a PyQt5 GUI through ImageQt. Is PyQt5 still a supported binding for that?"),
 ("q07", "state", "When I resize an I;16 (16-bit integer) image without choosing a resample filter, which filter does Pillow use by default nowadays?"),
 ("q08", "state", "Is ImageMath.eval() still the recommended way to evaluate an expression over image bands, or has it been replaced?"),
 ("q09", "state", "What happens today if I save an RGBA image as a JPEG: is the alpha quietly thrown away, do I get a warning, or does it fail?"),
 ("q10", "state", "What is the minimum FreeType version Pillow builds against right now, and is that minimum about to be raised again?"),
 # origin
 ("q11", "origin", "Which Pillow release first made it possible to write animated PNG files, not just peek at them?"),
 ("q12", "origin", "When was the public getexif() method added to Image?"),
 ("q13", "origin", "In which version did Pillow first let me save every frame of a multi-frame image into one GIF or PDF file?"),
 ("q14", "origin", "Which Pillow version added a way to draw rectangles with rounded corners in ImageDraw?"),
 ("q15", "origin", "When did Pillow gain support for laying out complex scripts and right-to-left text with libraqm?"),
 ("q16", "origin", "Which Pillow release first let me read the XMP metadata embedded in a photo?"),
 ("q17", "origin", "In which release were the Image.Resampling and Image.Transpose enum classes introduced?"),
 ("q18", "origin", "Since which version does ImageDraw.text() honour an anchor argument for positioning the text relative to the xy point?"),
 # lookup
 ("q19", "lookup", "What does the keep_rgb option do when saving a JPEG, and what happens if I combine it with chroma subsampling?"),
 ("q20", "lookup", "What did the default value of the WebP save option \"method\" change to, and what was it before?"),
 ("q21", "lookup", "How does ImageOps.contain differ from ImageOps.fit and ImageOps.pad?"),
 ("q22", "lookup", "At what image size does Pillow raise DecompressionBombError instead of only warning, and how do I turn the check off?"),
 ("q23", "lookup", "How do I turn on the multiple component transformation when saving a JPEG 2000 file, and can I write a raw codestream without the JP2 wrapper?"),
 ("q24", "lookup", "What does Image.entropy() return, and how does it use a mask if I pass one?"),
 ("q25", "lookup", "How much smaller are the GIF files written by the newer encoder, and what compression does it use?"),
 ("q26", "lookup", "What is ImageFont.MAX_STRING_LENGTH for, and how can I disable the limit?"),
 # paraphrase
 ("q27", "paraphrase", "When I shrink a picture to fit inside a box, the result is a pixel short and the proportions drift slightly. Did a release fix how the reduced size is worked out?"),
 ("q28", "paraphrase", "I want captions whose letters have a contrasting border drawn around them so they stay readable over busy backgrounds. Is that built in?"),
 ("q29", "paraphrase", "On a Windows PC with two displays, can I capture everything shown on both of them in one picture?"),
 ("q30", "paraphrase", "Softening a photo heavily used to take far longer than softening it lightly. Did some release make the cost stop growing with the strength of the effect?"),
 ("q31", "paraphrase", "Pictures shot on phones come out sideways after I load them. Is there a helper that turns them upright using what the camera recorded?"),
 ("q32", "paraphrase", "I need to scale a picture so it completely spans a target box without distorting it, even if one side overshoots. Is there a ready-made helper for that?"),
 # process
 ("q33", "process", "After upgrading Pillow, our custom decoder fails because ImageFile.raise_ioerror no longer exists. What should it call instead?"),
 ("q34", "process", "Since upgrading, accessing im.category emits a deprecation warning. How should I check whether an image has several frames instead?"),
 ("q35", "process", "After an upgrade our code calling ImageOps.gaussian_blur and ImageOps.unsharp_mask breaks with AttributeError. What do I use now?"),
 ("q36", "process", "We upgraded and im.tostring() now fails. What is the replacement for getting the raw pixel bytes?"),
]
assert len(Q) == 36 and len({q[0] for q in Q}) == 36
with Path("eval/retrieval/pillow/queries.jsonl").open("w", encoding="utf-8") as out:
    for qid, kind, text in Q:
        split = "dev" if qid in DEV else "test"
        out.write(json.dumps({"_id": qid, "text": text, "metadata": {"kind": kind, "split": split}}, ensure_ascii=False) + "\n")
print(len(Q), "queries")
