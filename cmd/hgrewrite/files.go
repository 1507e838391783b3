package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"hgrewrite/elfrw"
)

// findRuntime locates the runtime library: the --runtime flag, else
// HGREWRITE_RUNTIME, else beside the hgrewrite executable.
func findRuntime(flag string) (string, error) {
	cands := []string{flag, os.Getenv("HGREWRITE_RUNTIME")}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		cands = append(cands, filepath.Join(filepath.Dir(exe), elfrw.RuntimeLibName))
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c, nil
		}
		if c == flag {
			return "", fmt.Errorf("runtime library %s not found", flag)
		}
	}
	return "", fmt.Errorf("runtime library %s not found beside the hgrewrite binary (build with make, or pass --runtime)", elfrw.RuntimeLibName)
}

// checkOutput refuses to overwrite the input and checks the directory.
func checkOutput(input, output string) error {
	if st, err := os.Stat(output); err == nil {
		if st.IsDir() {
			return fmt.Errorf("output %s is a directory", output)
		}
		if in, err := os.Stat(input); err == nil && os.SameFile(in, st) {
			return fmt.Errorf("output %s is the input file; choose another name", output)
		}
	}
	dir := filepath.Dir(output)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("output directory %s: %v", dir, pathErr(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("output directory %s is not a directory", dir)
	}
	return nil
}

func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it, so that a failure never leaves a half-written output.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, pathErr(err))
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(name, mode)
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		os.Remove(name)
		return fmt.Errorf("cannot write %s: %v", path, pathErr(werr))
	}
	return nil
}

// installRuntime copies the runtime library into dir unless an identical
// copy is already there.
func installRuntime(lib, dir string) error {
	data, err := os.ReadFile(lib)
	if err != nil {
		return fmt.Errorf("runtime library: %v", err)
	}
	dst := filepath.Join(dir, elfrw.RuntimeLibName)
	if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return writeFileAtomic(dst, data, 0o755)
}
