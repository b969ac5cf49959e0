// Garden: progressive enhancement only. Every page works without this script: the
// "Apply reviewed plan…" button then posts to a confirmation page instead of opening the
// dialog below, and ids are copied by hand. Hand-written on purpose; no libraries.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Open the confirmation <dialog> in place of the confirmation page.
  for (const button of document.querySelectorAll("button[data-dialog]")) {
    const dialog = document.getElementById(button.dataset.dialog);
    if (!dialog || typeof dialog.showModal !== "function") continue;
    button.addEventListener("click", (event) => {
      event.preventDefault();
      dialog.showModal();
      const decline = dialog.querySelector("#decline");
      if (decline) decline.focus();  // the safe choice has the focus
    });
  }

  // An uploaded plan file is shown in the paste box, so the operator sees what is sent.
  for (const input of document.querySelectorAll("input[type=file][name=plan_file]")) {
    input.addEventListener("change", async () => {
      const file = input.files && input.files[0];
      const box = input.form && input.form.querySelector("textarea[name=plan_text]");
      if (!file || !box || file.size > 1024 * 1024) return;
      box.value = await file.text();
    });
  }

  // Ids are shown short; a click copies the full id (kept in data-copy) to the clipboard.
  // Without this script the full id is in the title (hover) and the links still work.
  const copy = async (element) => {
    try {
      await navigator.clipboard.writeText(element.dataset.copy);
      element.dataset.copied = "copied";
    } catch (error) {
      element.dataset.copied = "press Ctrl+C";
      const range = document.createRange();
      range.selectNodeContents(element);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    window.setTimeout(() => { delete element.dataset.copied; }, 1500);
  };
  for (const element of document.querySelectorAll("[data-copy]")) {
    element.hidden = false;
    element.classList.add("copyable");
    element.addEventListener("click", (event) => {
      event.preventDefault();
      copy(element);
    });
  }

  // A submitted form cannot be sent twice by a double click.
  for (const form of document.querySelectorAll("form[method=post]")) {
    form.addEventListener("submit", () => {
      window.setTimeout(() => {
        for (const b of form.querySelectorAll("button[type=submit]")) b.disabled = true;
      }, 0);
    });
  }
});
