// Names cut short with an ellipsis (.clip, a table's .row-title) show themselves whole in their
// title: set when the pointer or focus reaches one that is cut, so every page gets it for free.
function reveal(event) {
  const el = event.target instanceof Element ? event.target.closest(".clip, .data-table .row-title") : null;
  if (!el || el.hasAttribute("title")) return;
  if (el.scrollWidth > el.clientWidth) el.title = el.textContent.trim();
}

document.addEventListener("pointerover", reveal);
document.addEventListener("focusin", reveal);
