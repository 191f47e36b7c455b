// MathJax for the pymdownx.arithmatex "generic" output: \( ... \) inline, \[ ... \] display.
window.MathJax = {
  tex: {inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true, processEnvironments: true},
  options: {ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex"}
};
document$.subscribe(() => {   // Material's instant navigation: typeset each page it loads
  if (window.MathJax.typesetPromise) { MathJax.startup.output.clearCache(); MathJax.typesetClear(); MathJax.texReset(); MathJax.typesetPromise(); }
});
