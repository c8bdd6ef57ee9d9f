// A server-rendered error ([data-autofocus], role="alert") takes keyboard focus on load.
const target = document.querySelector("[data-autofocus]");
if (target) target.focus();
