// Every text node under the root, character by character: two letters or digits of one word on
// different lines are a word broken in the middle, a defect when the whole word (the run without
// spaces around it) is no wider than `room`: it could have had a line of its own. On a wide
// screen the room is the page's width (a table column can grow, or cut the name short); on a
// phone it is the word's own block.
([root, pageWide]) => {
  const broken = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  const word = /[\p{L}\p{N}]/u;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest("[hidden], dialog:not([open]), .visually-hidden, script, style")) continue;
    if (!el.getClientRects().length) continue;
    const text = node.textContent;
    let previousTop = null;
    for (let i = 0; i < text.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (!rect) { previousTop = null; continue; }
      const newLine = previousTop !== null && rect.top > previousTop + 2;
      if (newLine && word.test(text[i]) && word.test(text[i - 1])) {
        let start = i, end = i;
        while (start > 0 && !/\s/.test(text[start - 1])) start--;
        while (end < text.length && !/\s/.test(text[end])) end++;
        range.setStart(node, start);
        range.setEnd(node, end);
        const width = [...range.getClientRects()].reduce((sum, r) => sum + r.width, 0);
        let block = el;
        while (block.parentElement && getComputedStyle(block).display.startsWith("inline")) {
          block = block.parentElement;
        }
        const style = getComputedStyle(block);
        const room = pageWide
          ? document.querySelector("main").clientWidth
          : block.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        if (width <= room) {
          broken.push(text.slice(Math.max(0, i - 12), i) + "|" + text.slice(i, i + 12));
        }
        range.setStart(node, i);
        range.setEnd(node, i + 1);
      }
      previousTop = rect.top;
    }
  }
  return broken;
}
