// The colour switch in the header: light, dark, or as the system prefers (the default),
// remembered in this browser. boot.js applies the remembered choice before the first paint.
const KEY = "aiplane-theme";
const root = document.documentElement;
const select = document.getElementById("theme-select");

function apply(choice) {
  if (choice === "light" || choice === "dark") root.dataset.theme = choice;
  else delete root.dataset.theme;
}

function remembered() {
  try {
    return localStorage.getItem(KEY) || "system";
  } catch {
    return "system";
  }
}

if (select) {
  select.value = ["light", "dark"].includes(remembered()) ? remembered() : "system";
  select.addEventListener("change", () => {
    apply(select.value);
    try {
      if (select.value === "system") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, select.value);
    } catch {
      // Not remembered where storage is refused; this page still follows the choice.
    }
  });
}
