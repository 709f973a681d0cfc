package store

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// randomEpoch returns a non-zero epoch below 2^31, so that every resource version stays a
// positive int64 (continue tokens carry it as int64).
func randomEpoch() uint32 {
	var b [4]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err)) // crypto/rand never fails on Linux
		}
		if e := binary.BigEndian.Uint32(b[:]) & 0x7fffffff; e != 0 {
			return e
		}
	}
}

func (s *Store) encodeRV(counter uint64) uint64 { return uint64(s.epoch)<<32 | counter }

func (s *Store) formatRV(counter uint64) string { return strconv.FormatUint(s.encodeRV(counter), 10) }

// parseRV turns a resource version string into this store's change counter. A malformed value
// is a 400; a value issued by another process (another replica, an earlier run) is a 410.
func (s *Store) parseRV(rv string) (uint64, error) {
	v, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q: must be a decimal unsigned integer", rv))
	}
	if v == 0 {
		return 0, nil
	}
	if uint32(v>>32) != s.epoch {
		return 0, apierrors.NewResourceExpired(fmt.Sprintf("resource version %s was not issued by this server (another replica or an earlier process): list again", rv))
	}
	return v & 0xffffffff, nil
}
