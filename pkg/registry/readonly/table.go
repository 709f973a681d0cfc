package readonly

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/clock"
)

// Age is an AGE cell: how long ago t was, as kubectl prints it, or <unknown> without a time.
func Age(clk clock.PassiveClock, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(clk.Since(t.Time))
}

// TableConvertor renders objects as rows of fixed columns. Cells returns one row's cells in
// column order; columns with Priority 1 are shown by `kubectl get -o wide` only.
type TableConvertor struct {
	Columns []metav1.TableColumnDefinition
	Cells   func(obj runtime.Object) ([]interface{}, error)
}

// ConvertToTable handles a list, a single object, and the empty object of a watch bookmark
// (the API server converts every watch event when kubectl asks for Table output).
func (c TableConvertor) ConvertToTable(_ context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: c.Columns}
	if opts, ok := tableOptions.(*metav1.TableOptions); ok && opts != nil && opts.NoHeaders {
		table.ColumnDefinitions = nil
	}

	addRow := func(obj runtime.Object) error {
		cells, err := c.Cells(obj)
		if err != nil {
			return err
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}})
		return nil
	}

	if meta.IsListType(object) {
		listMeta, err := meta.ListAccessor(object)
		if err != nil {
			return nil, fmt.Errorf("converting to table: %w", err)
		}
		table.ResourceVersion = listMeta.GetResourceVersion()
		table.Continue = listMeta.GetContinue()
		table.RemainingItemCount = listMeta.GetRemainingItemCount()
		if err := meta.EachListItem(object, addRow); err != nil {
			return nil, fmt.Errorf("converting to table: %w", err)
		}
		return table, nil
	}

	objMeta, err := meta.Accessor(object)
	if err != nil {
		return nil, fmt.Errorf("converting to table: %w", err)
	}
	table.ResourceVersion = objMeta.GetResourceVersion()
	if objMeta.GetName() == "" {
		return table, nil // a bookmark: no row
	}
	if err := addRow(object); err != nil {
		return nil, fmt.Errorf("converting to table: %w", err)
	}
	return table, nil
}
