// The layout: the mobile menu toggle and the language selector.
import { api } from "./api.js";
import { showError } from "./ui.js";

const header = document.querySelector(".site-header");
const toggle = document.querySelector(".nav-toggle");
if (header && toggle) {
  toggle.addEventListener("click", () => {
    const open = !header.classList.contains("is-open");
    header.classList.toggle("is-open", open);
    toggle.setAttribute("aria-expanded", String(open));
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && header.classList.contains("is-open")) {
      header.classList.remove("is-open");
      toggle.setAttribute("aria-expanded", "false");
      toggle.focus();
    }
  });
}

const picker = document.getElementById("language-select");
if (picker) {
  picker.addEventListener("change", async () => {
    const language = picker.value;
    if (picker.dataset.signedIn === "1") {
      try {
        await api("PUT", "/api/v0/me", { language });
      } catch (error) {
        picker.value = document.documentElement.lang;
        showError(document.getElementById("global-alert"), error.message);
        return;
      }
    }
    // The profile follows the person; the cookie serves the sign-in page and anyone signed out.
    document.cookie = `lang=${language}; path=/; max-age=31536000; samesite=lax`;
    window.location.reload();
  });
}
